import { Turns } from './turns';

describe('Turns', () => {
  it('alternates two runs step by step, and lets the one left run on alone', async () => {
    const turns = new Turns();
    const order: string[] = [];
    const run = async (name: string, steps: number) => {
      await turns.take();
      try {
        for (let step = 1; step <= steps; step += 1) {
          await turns.pass();
          // Nothing else runs while a step holds the turn, however long it takes.
          order.push(`${name}${step} start`);
          await new Promise((resolve) => setTimeout(resolve, 5));
          order.push(`${name}${step} end`);
        }
      } finally {
        turns.release();
      }
    };
    await Promise.all([run('a', 3), run('b', 2)]);
    expect(order).toEqual(['a1 start', 'a1 end', 'b1 start', 'b1 end', 'a2 start', 'a2 end', 'b2 start', 'b2 end', 'a3 start', 'a3 end']);
  });

  it('does not wait when nobody else wants the turn', async () => {
    const turns = new Turns();
    await turns.take();
    await turns.pass();
    turns.release();
    await turns.take();
  });
});
