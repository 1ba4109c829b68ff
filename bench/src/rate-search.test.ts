import { summarize } from './latency';
import { highestRate, lowestMissedAbove, ratioBounds, type Step } from './rate-search';

/** A step at `rate` whose requests all took `latencyMs`. */
function step(rate: number, latencyMs: number): Step {
  const samples = Array.from({ length: 100 }, () => ({ intendedAt: 0, latencyMs, status: 200, retryAfter: false }));
  return { rate, latency: summarize(samples), usage: {} };
}

describe('what a rate search brackets', () => {
  it('takes the lowest missed rate above the highest held one', () => {
    // The ladder of s0 in one run: up by half, then halving the gap.
    const steps = [step(255, 8), step(383, 16), step(575, 263), step(479, 56), step(431, 13)];
    expect(lowestMissedAbove(steps, 431)).toBe(479);
    // A miss below the held rate (a noisy step early in the search) brackets nothing.
    expect(lowestMissedAbove([step(113, 60), step(170, 30), step(255, 40)], 255)).toBeNull();
  });

  it('bounds the ratio of two searches by what each held and missed', () => {
    const s1 = { maxRate: 192, lowestMissedRate: 213 };
    const s0 = { maxRate: 431, lowestMissedRate: 479 };
    expect(ratioBounds(s1, s0)).toEqual({ low: 0.4, high: 0.49 });
  });

  it('leaves a bound open where a search has no bracket on that side', () => {
    // s0 held every rate it was given (the search ran out of steps rising): its rate may be far higher.
    expect(ratioBounds({ maxRate: 255, lowestMissedRate: 319 }, { maxRate: 383, lowestMissedRate: null })).toEqual({ low: null, high: 0.83 });
    expect(ratioBounds({ maxRate: 255, lowestMissedRate: null }, { maxRate: 383, lowestMissedRate: 575 })).toEqual({ low: 0.44, high: null });
  });
});

describe('a rate search that confirms its misses', () => {
  // A path that answers at once, except that it fails through a passing stall (the requests of
  // the first step at 150/s) and from the 120th request on (every step after the stall's repeat
  // misses). Each step is made from the requests it would send in 300 ms, not timed: the search's
  // outcome must not hang on the machine's load.
  const failing = (index: number) => (index >= 30 && index < 75) || index >= 120;
  const measure = async (rate: number, offset: number) => {
    const sent = Math.round((rate * 300) / 1000);
    const indexes = Array.from({ length: sent }, (_, i) => offset + i);
    const samples = indexes.map((index) => ({ intendedAt: 0, latencyMs: 1, status: failing(index) ? 503 : 200, retryAfter: false }));
    return { step: { rate, latency: summarize(samples), usage: {} }, sent };
  };
  const search = (confirmMisses: boolean) =>
    highestRate({
      startRate: 100,
      stepMs: 300,
      maxSteps: 6,
      confirmMisses,
      pids: {},
      send: async () => ({ status: 200, retryAfter: false }),
      log: () => undefined,
      measure,
    });

  it('runs a missed step again and counts the rate as held when the repeat holds', async () => {
    const result = await search(true);
    expect(result.steps.map((step) => step.rate)).toEqual([100, 150, 150, 225, 225, 188]);
    expect(result.maxRate).toBe(150);
    expect(result.lowestMissedRate).toBe(188);
  }, 30_000);

  it('without it, ends the climb at the stall', async () => {
    const result = await search(false);
    expect(result.steps[1]!.rate).toBe(150);
    expect(result.maxRate).toBe(125);
    expect(result.lowestMissedRate).toBe(138);
  }, 30_000);
});
