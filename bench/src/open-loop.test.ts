import { runOpenLoop } from './open-loop';

describe('open-loop load', () => {
  it('sends every request on schedule even while earlier ones are unanswered', async () => {
    let inFlight = 0;
    let most = 0;
    const samples = await runOpenLoop({
      phases: [{ rate: 200, durationMs: 250 }],
      send: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        // Every answer takes 100 ms: a closed loop would send one at a time.
        await new Promise((resolve) => setTimeout(resolve, 100));
        inFlight -= 1;
        return { status: 200, retryAfter: false };
      },
    });
    expect(samples).toHaveLength(50);
    expect(most).toBeGreaterThan(10);
    // Latency counts from the intended send time, so none is below the server's 100 ms.
    expect(Math.min(...samples.map((sample) => sample.latencyMs))).toBeGreaterThanOrEqual(99);
  });

  it('counts a request it has no room for as a failure instead of delaying it', async () => {
    const samples = await runOpenLoop({
      phases: [{ rate: 1000, durationMs: 20 }],
      maxInFlight: 2,
      send: () => new Promise((resolve) => setTimeout(() => resolve({ status: 200, retryAfter: false }), 50)),
    });
    expect(samples.filter((sample) => sample.status === 0).length).toBeGreaterThan(0);
    expect(samples.filter((sample) => sample.status === 200)).toHaveLength(2);
  });

  it('changes rate from one phase to the next', async () => {
    const samples = await runOpenLoop({
      phases: [
        { rate: 100, durationMs: 100 },
        { rate: 1000, durationMs: 100 },
      ],
      send: async () => ({ status: 200, retryAfter: false }),
    });
    expect(samples).toHaveLength(110);
    expect(samples.filter((sample) => sample.intendedAt >= 100)).toHaveLength(100);
  });
});
