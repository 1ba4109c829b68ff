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
  /**
   * Run a step that missed once more at the same rate, and count the rate as missed only when
   * that one misses too (the repeat counts against `maxSteps`): a stall of the machine or the
   * store in one 10-second step otherwise ends a search's climb by itself.
   */
  confirmMisses?: boolean;
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
  /**
   * Runs one step at `rate` from request number `offset`: measureStep by default. A test of the
   * search itself passes steps that do not hang on the machine's load.
   */
  measure?: (rate: number, offset: number) => Promise<{ step: Step; sent: number }>;
}

export interface RateSearchResult extends Partial<NonNullable<ReturnType<typeof costOf>>> {
  /** The highest rate with p99 under the target and no errors (0: none held). */
  maxRate: number;
  /**
   * The lowest rate above `maxRate` that missed: the path's highest rate lies between the two.
   * Null when no step above `maxRate` missed (the search ran out of steps still rising).
   */
  lowestMissedRate: number | null;
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

/** A step's line in the log, with its pauses and slowest requests under it. */
function logStep(step: Step, log: (message: string) => void) {
  log(
    `  ${String(step.rate).padStart(5)}/s  p50 ${step.latency.p50} ms  p99 ${step.latency.p99} ms  p99.9 ${step.latency.p999} ms  errors ${JSON.stringify(step.latency.errors)}${step.storeStatementsPerRequest === undefined ? '' : `  store statements/request ${step.storeStatementsPerRequest}`}  ${held(step) ? 'held' : 'missed'}`,
  );
  if (step.pauses) {
    const each = (figure: (pauses: Pauses) => number | undefined) =>
      Object.entries(step.pauses!)
        .filter(([, pauses]) => figure(pauses) !== undefined)
        .map(([name, pauses]) => `${name} ${figure(pauses)}`)
        .join(', ');
    log(`         longest loop delay ms: ${each((pauses) => pauses.loopDelayMaxMs)}; GC ms: ${each((pauses) => pauses.gcMs)}`);
  }
  if (step.slowest?.length) log(`         slowest: ${step.slowest.map((one) => `${(one.atMs / 1000).toFixed(2)} s ${Math.round(one.latencyMs)} ms`).join(', ')}`);
}

/**
 * Finds the highest rate the path holds: raises the rate by half until a step misses the target,
 * then halves the gap between the best held and the first missed rate while it is above 15%
 * (with `confirmMisses`, a rate is missed only when two steps at it in a row miss).
 */
export async function highestRate(options: RateSearchOptions): Promise<RateSearchResult> {
  const steps: Step[] = [];
  let rate = options.startRate;
  let best: Step | undefined;
  let missed = Number.POSITIVE_INFINITY;
  let offset = 0;
  const stepAt = async (at: number) => {
    await options.beforeStep?.();
    const { step, sent } = options.measure
      ? await options.measure(at, offset)
      : await measureStep(at, options.stepMs, options.pids, options.send, offset, options.countStatements, options.metricsUrls);
    offset += sent;
    steps.push(step);
    logStep(step, options.log);
    return step;
  };
  for (let stepsLeft = options.maxSteps; stepsLeft > 0; ) {
    let step = await stepAt(rate);
    stepsLeft -= 1;
    if (!held(step) && options.confirmMisses && stepsLeft > 0) {
      options.log(`         missed: the same rate once more, to tell a lasting miss from a passing stall`);
      await sleep(1_000);
      step = await stepAt(rate);
      stepsLeft -= 1;
    }
    const ok = held(step);
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
  const maxRate = best?.rate ?? 0;
  return { maxRate, lowestMissedRate: lowestMissedAbove(steps, maxRate), atMax: best, steps, ...(cost ?? {}) };
}

/** The lowest rate above `maxRate` among the steps that missed, or null when none did. */
export function lowestMissedAbove(steps: readonly Step[], maxRate: number): number | null {
  const missed = steps.filter((step) => !held(step) && step.rate > maxRate).map((step) => step.rate);
  return missed.length > 0 ? Math.min(...missed) : null;
}

/**
 * What two searches can say of the ratio of their highest rates. Each search brackets its path's
 * true highest rate between the rate it held and the lowest it missed above that (the search
 * stops once the two are within 15%), so the ratio of the true rates lies between the held rate
 * over the other's missed one and the missed rate over the other's held one. A bound is null
 * where a search has no bracket on that side (nothing missed above what it held, or nothing held).
 */
export function ratioBounds(path: Pick<RateSearchResult, 'maxRate' | 'lowestMissedRate'>, reference: Pick<RateSearchResult, 'maxRate' | 'lowestMissedRate'>) {
  const round = (ratio: number) => Math.round(ratio * 100) / 100;
  return {
    low: reference.lowestMissedRate ? round(path.maxRate / reference.lowestMissedRate) : null,
    high: path.lowestMissedRate !== null && reference.maxRate > 0 ? round(path.lowestMissedRate / reference.maxRate) : null,
  };
}
