import { PerKeyQueue } from './per-key-queue';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PerKeyQueue', () => {
  test('runs the tasks of one key one at a time, in order, and those of other keys alongside', async () => {
    const queue = new PerKeyQueue();
    const log: string[] = [];
    const release: Record<string, () => void> = {};
    const task = (name: string) => () =>
      new Promise<string>((resolve) => {
        log.push(`start ${name}`);
        release[name] = () => {
          log.push(`end ${name}`);
          resolve(name);
        };
      });
    const a1 = queue.run('a', task('a1'));
    const a2 = queue.run('a', task('a2'));
    const b1 = queue.run('b', task('b1'));
    await tick();
    expect(log).toEqual(['start a1', 'start b1']);
    release.a1!();
    await tick();
    expect(log).toEqual(['start a1', 'start b1', 'end a1', 'start a2']);
    release.a2!();
    release.b1!();
    expect(await Promise.all([a1, a2, b1])).toEqual(['a1', 'a2', 'b1']);
    await tick();
    expect(queue.size).toBe(0);
  });

  test('a failed task fails its own caller only; the next task of the key still runs', async () => {
    const queue = new PerKeyQueue();
    const failed = queue.run('a', () => Promise.reject(new Error('store away')));
    const next = queue.run('a', () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('store away');
    expect(await next).toBe('ran');
  });
});
