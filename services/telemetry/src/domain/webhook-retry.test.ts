import { nextAttemptAt } from './webhook-retry';

const DEFAULTS = { baseDelayMs: 10_000, maxDelayMs: 3_600_000, windowMs: 86_400_000 };

test('waits double after each failure up to the longest wait, and stop at the end of the window', () => {
  const created = new Date(0);
  const waits: number[] = [];
  let now = created;
  for (let failures = 1; ; failures++) {
    const next = nextAttemptAt(created, failures, now, DEFAULTS);
    if (!next) break;
    waits.push(next.getTime() - now.getTime());
    now = next;
  }
  expect(waits.slice(0, 5)).toEqual([10_000, 20_000, 40_000, 80_000, 160_000]);
  expect(Math.max(...waits)).toBe(3_600_000);
  // Attempts go on for the whole window (24 h by default), well past the hour the brief asks for.
  expect(now.getTime() - created.getTime()).toBeGreaterThan(23 * 3_600_000);
  expect(now.getTime() - created.getTime()).toBeLessThanOrEqual(DEFAULTS.windowMs);
});
