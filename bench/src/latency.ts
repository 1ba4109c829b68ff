import type { Sample } from './open-loop';

export interface LatencySummary {
  requests: number;
  /** Answers that were not 2xx, by status ("0" for network and client-side failures). */
  errors: Record<string, number>;
  errorRate: number;
  /** 429 and 503 answers that carried Retry-After: load shed as designed. */
  shedWithRetryAfter: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/** The q-quantile (0..1) of ascending `sorted`, nearest-rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarize(samples: readonly Sample[]): LatencySummary {
  const latencies = samples.map((sample) => sample.latencyMs).sort((a, b) => a - b);
  const errors: Record<string, number> = {};
  let failed = 0;
  let shed = 0;
  for (const sample of samples) {
    if (sample.status >= 200 && sample.status < 300) continue;
    failed += 1;
    errors[String(sample.status)] = (errors[String(sample.status)] ?? 0) + 1;
    if ((sample.status === 429 || sample.status === 503) && sample.retryAfter) shed += 1;
  }
  const round = (value: number) => Math.round(value * 100) / 100;
  return {
    requests: samples.length,
    errors,
    errorRate: samples.length ? Number((failed / samples.length).toFixed(4)) : 0,
    shedWithRetryAfter: shed,
    p50: round(quantile(latencies, 0.5)),
    p99: round(quantile(latencies, 0.99)),
    p999: round(quantile(latencies, 0.999)),
    max: round(latencies.at(-1) ?? Number.NaN),
  };
}
