// What each service's own metrics say about the pauses of its event loop during a step: the time
// its garbage collector ran, and the longest the loop was held. A latency spike that one process's
// pause explains shows here beside the step's percentiles (the tail that sets s1's rate).

/** One service's pauses over a step. */
export interface Pauses {
  /** Time in garbage collection, ms, and how many collections; of it, the major (mark-sweep) ones (not read for the bench's own process). */
  gcMs?: number;
  gcCount?: number;
  majorGcMs?: number;
  /** The longest and the 99th-percentile delay of the event loop over the step, ms (prom-client's monitorEventLoopDelay, reset at each scrape). */
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
}

interface Reading {
  gcSeconds: number;
  gcCount: number;
  majorGcSeconds: number;
  loopDelayMaxSeconds: number;
  loopDelayP99Seconds: number;
}

/** The value of each sample of `name` in a Prometheus text exposition, with its labels' text. */
function samples(text: string, name: string): Array<{ labels: string; value: number }> {
  const found: Array<{ labels: string; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(\{[^}]*\})? ([^ ]+)/.exec(line);
    if (match && match[1] === name) found.push({ labels: match[2] ?? '', value: Number(match[3]) });
  }
  return found;
}

/** The sum of a metric's samples whose labels `keep` takes. */
export type MetricTotal = (name: string, keep?: (labels: string) => boolean) => number;

/**
 * Scrapes a service's Prometheus endpoint once and answers what `readOut` makes of it; undefined
 * when the service does not answer, which leaves it out of the reading and not the run.
 */
export async function scrapeMetrics<T>(url: string, readOut: (total: MetricTotal) => T): Promise<T | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) return undefined;
    const text = await response.text();
    return readOut((name, keep = () => true) => samples(text, name).filter((one) => keep(one.labels)).reduce((sum, one) => sum + one.value, 0));
  } catch {
    return undefined;
  }
}

function read(url: string): Promise<Reading | undefined> {
  return scrapeMetrics(url, (total) => ({
    gcSeconds: total('nodejs_gc_duration_seconds_sum'),
    gcCount: total('nodejs_gc_duration_seconds_count'),
    majorGcSeconds: total('nodejs_gc_duration_seconds_sum', (labels) => labels.includes('kind="major"')),
    loopDelayMaxSeconds: total('nodejs_eventloop_lag_max_seconds'),
    loopDelayP99Seconds: total('nodejs_eventloop_lag_p99_seconds'),
  }));
}

/**
 * Reads every service's metrics now; the returned function reads them again and answers each
 * service's pauses in between. The first read also resets the loop-delay figures, so the second
 * covers the step alone.
 */
export async function startPauseReading(metricsUrls: Record<string, string>): Promise<() => Promise<Record<string, Pauses>>> {
  const names = Object.keys(metricsUrls);
  const before = await Promise.all(names.map((name) => read(metricsUrls[name]!)));
  return async () => {
    const after = await Promise.all(names.map((name) => read(metricsUrls[name]!)));
    const ms = (seconds: number) => Math.round(seconds * 10_000) / 10;
    const result: Record<string, Pauses> = {};
    names.forEach((name, index) => {
      const [start, end] = [before[index], after[index]];
      if (!start || !end) return;
      result[name] = {
        gcMs: ms(end.gcSeconds - start.gcSeconds),
        gcCount: end.gcCount - start.gcCount,
        majorGcMs: ms(end.majorGcSeconds - start.majorGcSeconds),
        loopDelayMaxMs: ms(end.loopDelayMaxSeconds),
        loopDelayP99Ms: ms(end.loopDelayP99Seconds),
      };
    });
    return result;
  };
}
