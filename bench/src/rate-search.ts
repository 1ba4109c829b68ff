import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { summarize, type LatencySummary } from './latency';
import { runOpenLoop, type Outcome, type Sample } from './open-loop';
import { perRequest, usageOf, usageOfInBackground, type Usage } from './process-usage';
import { startPauseReading, type Pauses } from './service-pauses';
import { BUSY_FLEET_CHECKS_PER_SECOND, FLEET_CHECKS_PER_SECOND, costOf, statementsPerRequest } from './store-statements';

/** The target the issue sets for the device API: p99 at most 50 ms, with no errors. */
export const P99_TARGET_MS = 50;

export interface Step {
  rate: number;
  latency: LatencySummary;
  /** CPU ms per request and resident memory, per process, over the whole step. */
  usage: ReturnType<typeof perRequest>;
  /** PostgreSQL statements per request over the whole step, where they can be counted. */
  storeStatementsPerRequest?: number;
  /** Each service's garbage collection and longest event-loop delay over the step (service-pauses.ts). */
  pauses?: Record<string, Pauses>;
  /** The slowest measured requests: when each was due (ms into the step) and how long it took. */
  slowest?: Array<{ atMs: number; latencyMs: number }>;
  /**
   * CPU ms per request of each process in consecutive slices of the step, where asked for: whether
   * a cost is paid in the step's first seconds (a warm-up) or throughout (a state the process is in).
   */
  slices?: Array<{ fromMs: number; cpuMsPerRequest: Record<string, number> }>;
}

export interface RateSearchOptions {
  startRate: number;
  stepMs: number;
  /** Steps at most; 1 runs the start rate only (smoke runs). */
  maxSteps: number;
  pids: Record<string, number>;
  /** Sends request number `index`; indexes keep counting across steps. */
  send: (index: number) => Promise<Outcome>;
  log: (message: string) => void;
  /** Reads PostgreSQL's statement counter, where there is one. */
  countStatements?: () => number | undefined;
  /** Awaited before each step (a comparison's turn: turns.ts). */
  beforeStep?: () => Promise<void>;
  /** The services' metrics endpoints, for their pauses in each step. */
  metricsUrls?: Record<string, string>;
}

export interface RateSearchResult extends Partial<NonNullable<ReturnType<typeof costOf>>> {
  /** The highest rate with p99 under the target and no errors (0: none held). */
  maxRate: number;
  atMax: Step | undefined;
  steps: Step[];
}

/** Slowest requests kept per step: a percent of a 10-second step at 100/s. */
const SLOWEST_KEPT = 10;

const held = (step: Step) => step.latency.p99 <= P99_TARGET_MS && step.latency.requests > 0 && Object.keys(step.latency.errors).length === 0;

/** One step at a fixed rate; the first fifth of it is warm-up and left out of the latencies. */
export async function measureStep(
  rate: number,
  stepMs: number,
  pids: Record<string, number>,
  send: (index: number) => Promise<Outcome>,
  offset: number,
  countStatements?: () => number | undefined,
  metricsUrls?: Record<string, string>,
  sliceMs?: number,
) {
  const statementsBefore = countStatements?.();
  const before = usageOf(pids);
  const slicing = sliceMs ? readSlices(pids, before, sliceMs, rate) : undefined;
  // Read just before the step, so that the readings cover it whole (warm-up included): a scrape at
  // the end of the warm-up showed as a spike of its own in the measured requests.
  const pausesRead = metricsUrls ? await startPauseReading(metricsUrls) : undefined;
  // This process's own loop: a pause here delays the requests it sends, and counts in their latency.
  const benchLoop = monitorEventLoopDelay({ resolution: 10 });
  benchLoop.enable();
  const samples: Sample[] = await runOpenLoop({ phases: [{ rate, durationMs: stepMs }], send: (index) => send(offset + index) });
  benchLoop.disable();
  const slices = await slicing?.stop();
  const after = usageOf(pids);
  const pauses = { ...(await pausesRead?.()), bench: { loopDelayMaxMs: Math.round(benchLoop.max / 1e5) / 10, loopDelayP99Ms: Math.round(benchLoop.percentile(99) / 1e5) / 10 } };
  const statements = statementsPerRequest(statementsBefore, countStatements?.(), samples.length);
  const measured = samples.filter((sample) => sample.intendedAt >= stepMs / 5);
  const slowest = [...measured]
    .sort((a, b) => b.latencyMs - a.latencyMs)
    .slice(0, SLOWEST_KEPT)
    .map((sample) => ({ atMs: Math.round(sample.intendedAt), latencyMs: Math.round(sample.latencyMs * 10) / 10 }))
    .sort((a, b) => a.atMs - b.atMs);
  const step: Step = {
    rate,
    latency: summarize(measured),
    usage: perRequest(before, after, samples.length),
    ...(statements === undefined ? {} : { storeStatementsPerRequest: statements }),
    pauses,
    slowest,
    ...(slices ? { slices } : {}),
  };
  return { step, sent: samples.length };
}

/**
 * Reads each process's CPU every `sliceMs` while a step runs at `rate` (read off the event loop),
 * as CPU ms per request of the slice: an open loop sends rate × slice requests in each.
 */
function readSlices(pids: Record<string, number>, start: Record<string, Usage>, sliceMs: number, rate: number) {
  const startedAt = Date.now();
  const readings: Array<{ atMs: number; usage: Record<string, Usage> }> = [{ atMs: 0, usage: start }];
  let reading: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    reading = usageOfInBackground(pids).then((usage) => void readings.push({ atMs: Date.now() - startedAt, usage }));
  }, sliceMs);
  return {
    async stop() {
      clearInterval(timer);
      await reading;
      return readings.slice(1).map((end, index) => {
        const previous = readings[index]!;
        const requests = (rate * (end.atMs - previous.atMs)) / 1000;
        const cpuMsPerRequest = Object.fromEntries(
          Object.keys(end.usage).map((name) => [name, Math.round(((end.usage[name]!.cpuMs - (previous.usage[name]?.cpuMs ?? 0)) / Math.max(1, requests)) * 1000) / 1000]),
        );
        return { fromMs: previous.atMs, cpuMsPerRequest };
      });
    },
  };
}

/**
 * Finds the highest rate the path holds: raises the rate by half until a step misses the target,
 * then halves the gap between the best held and the first missed rate while it is above 15%.
 */
export async function highestRate(options: RateSearchOptions): Promise<RateSearchResult> {
  const steps: Step[] = [];
  let rate = options.startRate;
  let best: Step | undefined;
  let missed = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let round = 0; round < options.maxSteps; round += 1) {
    await options.beforeStep?.();
    const { step, sent } = await measureStep(rate, options.stepMs, options.pids, options.send, offset, options.countStatements, options.metricsUrls);
    offset += sent;
    steps.push(step);
    const ok = held(step);
    options.log(
      `  ${String(rate).padStart(5)}/s  p50 ${step.latency.p50} ms  p99 ${step.latency.p99} ms  p99.9 ${step.latency.p999} ms  errors ${JSON.stringify(step.latency.errors)}${step.storeStatementsPerRequest === undefined ? '' : `  store statements/request ${step.storeStatementsPerRequest}`}  ${ok ? 'held' : 'missed'}`,
    );
    if (step.pauses) {
      const each = (figure: (pauses: Pauses) => number | undefined) =>
        Object.entries(step.pauses!)
          .filter(([, pauses]) => figure(pauses) !== undefined)
          .map(([name, pauses]) => `${name} ${figure(pauses)}`)
          .join(', ');
      options.log(`         longest loop delay ms: ${each((pauses) => pauses.loopDelayMaxMs)}; GC ms: ${each((pauses) => pauses.gcMs)}`);
    }
    if (step.slowest?.length) options.log(`         slowest: ${step.slowest.map((one) => `${(one.atMs / 1000).toFixed(2)} s ${Math.round(one.latencyMs)} ms`).join(', ')}`);
    if (ok && (!best || rate > best.rate)) best = step;
    else if (!ok) missed = Math.min(missed, rate);
    const low = best?.rate ?? 0;
    if (Number.isFinite(missed) && low > 0 && missed / low < 1.15) break;
    rate = Number.isFinite(missed) ? Math.round((low + missed) / 2) : Math.round(rate * 1.5);
    if (rate <= 0 || rate === low || rate === missed) break;
    // Let queues drain, so that one step's backlog does not count against the next.
    await sleep(1_000);
  }
  const cost = costOf(best?.usage);
  if (cost) {
    options.log(
      `  at ${best!.rate}/s: our services ${cost.servicesCpuMsPerRequest} ms CPU per request (${cost.servicesCoresFor556PerSecond} cores for ${FLEET_CHECKS_PER_SECOND} requests/s, ${cost.servicesCoresFor3333PerSecond} for ${BUSY_FLEET_CHECKS_PER_SECOND}), the store ${cost.storeCpuMsPerRequest} ms`,
    );
  }
  return { maxRate: best?.rate ?? 0, atMax: best, steps, ...(cost ?? {}) };
}
