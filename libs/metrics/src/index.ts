import { createServer, type Server } from 'node:http';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { Counter, Histogram } from './series';

export type { Gauge } from 'prom-client';
export { Counter, CounterSeries, Histogram, HistogramSeries, type LabelValues } from './series';

// Buckets sized for a service whose hot path should answer in single-digit milliseconds.
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The label naming the process's component on every series. Not `service`: Kubernetes service
 * discovery (and so every ServiceMonitor) adds a `service` label of its own, which would rename
 * ours to `exported_service`.
 */
export const COMPONENT_LABEL = 'ota_component';

/**
 * How often the event-loop lag is sampled, ms, unless a process says otherwise
 * (METRICS_EVENT_LOOP_RESOLUTION_MS). Each sample is a timer that wakes the loop: at prom-client's
 * own 10 ms an idle process spent about 6 ms of CPU a second on it (docs/performance.md, "What an
 * idle service costs"). At 50 ms every hold of the loop as long as the device API's latency
 * budget still shows in the lag's maximum, and shorter ones in proportion to their length.
 */
export const EVENT_LOOP_RESOLUTION_MS = 50;

/**
 * The metrics registry of one process, with the Node.js defaults. A module that fills a metric
 * declares it here when it is made (`counter`, `histogram`, `gauge`), so a process serves only
 * the families it fills; declaring one name twice returns the family declared first.
 */
export class ServiceMetrics {
  readonly registry = new Registry();

  constructor(
    readonly component: string,
    eventLoopResolutionMs = EVENT_LOOP_RESOLUTION_MS,
  ) {
    this.registry.setDefaultLabels({ [COMPONENT_LABEL]: component });
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: eventLoopResolutionMs });
    // Gauges whose names end in _total, which Prometheus's conventions keep for counters (promtool
    // check metrics refuses them); the event-loop, heap and handle figures stay.
    for (const misnamed of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(misnamed);
  }

  counter<Label extends string>(name: string, help: string, labelNames: readonly Label[] = []): Counter<Label> {
    return this.existing<Counter<Label>>(name, Counter) ?? this.registered(new Counter(name, help, labelNames));
  }

  histogram<Label extends string>(name: string, help: string, labelNames: readonly Label[] = [], buckets = LATENCY_BUCKETS): Histogram<Label> {
    return this.existing<Histogram<Label>>(name, Histogram) ?? this.registered(new Histogram(name, help, labelNames, buckets));
  }

  /**
   * A gauge; with `collect`, its values are read when Prometheus scrapes (prom-client awaits it),
   * so a figure that lives in a store costs one read per scrape, not one per change.
   */
  gauge<Label extends string>(name: string, help: string, labelNames: readonly Label[] = [], collect?: (gauge: Gauge<Label>) => Promise<void> | void): Gauge<Label> {
    const existing = this.existing<Gauge<Label>>(name, Gauge);
    if (existing) return existing;
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect ? { async collect(this: Gauge<Label>) { await collect(this); } } : {}),
    });
  }

  /** Our counters and histograms (series.ts) give the registry what prom-client's own do. */
  private registered<M extends Counter<string> | Histogram<string>>(metric: M): M {
    this.registry.registerMetric(metric as never);
    return metric;
  }

  private existing<M>(name: string, kind: abstract new (...args: never[]) => unknown): M | undefined {
    const metric = this.registry.getSingleMetric(name);
    if (metric === undefined) return undefined;
    if (!(metric instanceof kind)) throw new Error(`metric ${name} is already declared as another type`);
    return metric as M;
  }
}

/**
 * A store read that several gauges of one scrape share (each one's `collect` awaits it, so none is
 * served a scrape late): callers while it runs get the same answer, and with `maxAgeMs` callers
 * within that long of its end get it again, so that close scrapes read once. A failed read answers
 * undefined, and the gauges keep what they last had: a scrape never fails because a store is away.
 */
export function sharedRead<T>(read: () => Promise<T>, maxAgeMs = 0): () => Promise<T | undefined> {
  let current: Promise<T | undefined> | undefined;
  let running = false;
  let endedAt = 0;
  return () => {
    if (current && (running || Date.now() - endedAt < maxAgeMs)) return current;
    running = true;
    current = read()
      .catch(() => undefined)
      .finally(() => {
        running = false;
        endedAt = Date.now();
      });
    return current;
  };
}

/**
 * `ota_ready`: 1 while the process answers its readiness probe, read when Prometheus scrapes, so
 * that a replica stuck not ready shows without kube-state-metrics.
 */
export function readinessGauge(metrics: ServiceMetrics, isReady: () => Promise<boolean> | boolean): void {
  metrics.gauge('ota_ready', '1 while the process would pass its readiness probe, 0 while it would fail it.', [], async (gauge) => {
    gauge.set((await isReady()) ? 1 : 0);
  });
}

/**
 * Serves GET /metrics for one registry on its own port; resolves once listening. `host` is where
 * it listens: every interface in a pod (the scraper is elsewhere), loopback on a workstation.
 */
export async function startMetricsServer(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (error: Error) => res.writeHead(500).end(error.message),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/**
 * Bounds a label whose values come from outside (a device's failure reason): the known values
 * pass, anything else is `other`, and a missing value is `none`. No label may grow with the fleet.
 */
export function boundedLabel(value: string | undefined, known: ReadonlySet<string>): string {
  if (!value) return 'none';
  return known.has(value) ? value : 'other';
}
