import { quantile, summarize } from './latency';

describe('latency summaries', () => {
  it('take nearest-rank quantiles', () => {
    const values = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect([quantile(values, 0.5), quantile(values, 0.99), quantile(values, 0.999), quantile(values, 1)]).toEqual([500, 990, 999, 1000]);
    expect(quantile([7], 0.99)).toBe(7);
  });

  it('count errors by status and tell shed load from failures', () => {
    const sample = (status: number, retryAfter = false) => ({ intendedAt: 0, latencyMs: 1, status, retryAfter });
    const summary = summarize([sample(200), sample(200), sample(503, true), sample(429, true), sample(500), sample(0)]);
    expect(summary.errors).toEqual({ '503': 1, '429': 1, '500': 1, '0': 1 });
    expect(summary.shedWithRetryAfter).toBe(2);
    expect(summary.errorRate).toBeCloseTo(4 / 6, 2);
  });
});
