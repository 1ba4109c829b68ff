import { performance } from 'node:perf_hooks';

/** What one request came back with: its HTTP status, and whether it carried Retry-After. */
export interface Outcome {
  status: number;
  retryAfter: boolean;
  /** Anything the scenario wants to keep of the answer (S9: which deployment was offered). */
  tag?: string;
}

export interface Sample {
  /** When the request was meant to be sent, ms since the run started. */
  intendedAt: number;
  /** From the intended send time to the answer, ms. */
  latencyMs: number;
  /** HTTP status, or 0 for a network error or a request the generator had no room for. */
  status: number;
  retryAfter: boolean;
  tag?: string;
}

export interface Phase {
  /** Requests per second, spread evenly. */
  rate: number;
  durationMs: number;
}

export interface LoadOptions {
  /** One after another, without a pause: a rate change does not wait for earlier answers. */
  phases: Phase[];
  /** Sends request number `index`; resolves with what the server answered. */
  send: (index: number) => Promise<Outcome>;
  /** Requests in flight at most; beyond it a request counts as a client-side failure (status 0). */
  maxInFlight?: number;
}

/**
 * Open-loop load: request i is due at i / rate seconds, whether or not earlier requests have been
 * answered, and its latency is measured from when it was due, not from when it went out. A server
 * that stalls therefore shows its stall in every request that queued behind it (no coordinated
 * omission), as a fleet of independent devices would see it.
 */
export async function runOpenLoop(options: LoadOptions): Promise<Sample[]> {
  // Every request's due time, phase by phase.
  const due: number[] = [];
  let phaseStart = 0;
  for (const phase of options.phases) {
    const count = Math.max(1, Math.round((phase.rate * phase.durationMs) / 1000));
    for (let k = 0; k < count; k += 1) due.push(phaseStart + (k * 1000) / phase.rate);
    phaseStart += phase.durationMs;
  }
  const maxInFlight = options.maxInFlight ?? 10_000;
  const samples: Sample[] = [];
  const pending = new Set<Promise<void>>();
  const start = performance.now();
  let next = 0;

  const dispatch = (index: number, intendedAt: number) => {
    if (pending.size >= maxInFlight) {
      samples.push({ intendedAt, latencyMs: performance.now() - start - intendedAt, status: 0, retryAfter: false });
      return;
    }
    const request = options
      .send(index)
      .catch((): Outcome => ({ status: 0, retryAfter: false }))
      .then((outcome) => {
        samples.push({ intendedAt, latencyMs: performance.now() - start - intendedAt, ...outcome });
        pending.delete(request);
      });
    pending.add(request);
  };

  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = performance.now() - start;
      while (next < due.length && due[next]! <= elapsed) {
        dispatch(next, due[next]!);
        next += 1;
      }
      if (next < due.length) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await Promise.all(pending);
  return samples.sort((a, b) => a.intendedAt - b.intendedAt);
}
