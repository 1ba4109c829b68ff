// Counters and histograms for the hot paths, served by prom-client's registry exactly as its own
// would be. prom-client's histogram keeps a series' buckets as object properties named by their
// upper bounds, so each observation converts a double to a property name, and each labelled call
// builds a string from its labels: in a CPU profile of a device check these made most of what the
// metrics of the gateway and registry cost (docs/performance.md, "Metrics without a lookup per
// observation"). Here a series is an object of its own, which a caller may hold (`series`) so that
// an observation is an array increment, and the one lookup of a labelled call is one Map read.

/** Label values by name; a label left out is not printed, as with prom-client. */
export type LabelValues<Label extends string> = Partial<Record<Label, string | number>>;

/** What prom-client's registry reads from a metric to print it (its Metric's `get` and `getForPromString`). */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string | number>;
  value: number;
  metricName?: string;
  exemplar?: null;
}

interface ExportedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: ExportedValue[];
  aggregator: 'sum';
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** What a family keeps of each series: whether it is printed, and how it starts again. */
interface Series {
  /** Printed once counted or observed (a family without labels prints its one series from the start), as with prom-client. */
  shown: boolean;
  zero(): void;
}

/**
 * The series of one family, by their label values, in the order they were first made. A series is
 * never dropped, so one that a caller holds stays the family's own, a reset included.
 */
abstract class Family<Label extends string, S extends Series> {
  private readonly series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly Label[],
  ) {
    if (!help) throw new Error('Missing mandatory help parameter');
    if (!METRIC_NAME.test(name)) throw new Error('Invalid metric name');
    if (!labelNames.every((label) => LABEL_NAME.test(label))) throw new Error('Invalid label name');
  }

  /** The series of these label values, made on first use; hold it to count or observe without a lookup. */
  seriesOf(labels: LabelValues<Label>): S {
    const key = this.keyOf(labels);
    let series = this.series.get(key);
    if (series === undefined) {
      for (const name of Object.keys(labels)) {
        if (!this.labelNames.includes(name as Label)) throw new Error(`Added label "${name}" is not included in initial labelset: ${JSON.stringify(this.labelNames)}`);
      }
      series = this.newSeries({ ...labels } as Record<string, string | number>);
      series.shown = this.labelNames.length === 0;
      this.series.set(key, series);
    }
    return series;
  }

  /**
   * Starts every series again from zero, printed only once used again (a family without labels
   * prints its one series at zero). Each subclass's constructor calls it last.
   */
  reset(): void {
    for (const series of this.series.values()) {
      series.zero();
      series.shown = this.labelNames.length === 0;
    }
    if (this.labelNames.length === 0) this.seriesOf({});
  }

  /** The series to print, in the order they were first made. */
  protected shownSeries(): S[] {
    return [...this.series.values()].filter((series) => series.shown);
  }

  protected abstract newSeries(labels: Record<string, string | number>): S;

  // A label left out and a label set to '' are different series, as with prom-client.
  private keyOf(labels: LabelValues<Label>): string {
    let key = '';
    for (const name of this.labelNames) {
      const value = labels[name];
      key += value === undefined ? '\u0001' : `${value}\u0000`;
    }
    return key;
  }
}

export class CounterSeries implements Series {
  value = 0;
  shown = false;

  constructor(readonly labels: Record<string, string | number>) {}

  inc(value = 1): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if (value < 0) throw new Error('It is not possible to decrease a counter');
    this.value += value;
    this.shown = true;
  }

  zero(): void {
    this.value = 0;
  }
}

/** A counter family (prom-client's `Counter`, without exemplars). */
export class Counter<Label extends string = string> extends Family<Label, CounterSeries> {
  readonly type = 'counter';
  readonly aggregator = 'sum';

  constructor(name: string, help: string, labelNames: readonly Label[]) {
    super(name, help, labelNames);
    this.reset();
  }

  inc(value?: number): void;
  inc(labels: LabelValues<Label>, value?: number): void;
  inc(labelsOrValue?: LabelValues<Label> | number, value?: number): void {
    if (typeof labelsOrValue === 'object') this.seriesOf(labelsOrValue).inc(value);
    else this.seriesOf({}).inc(labelsOrValue);
  }

  async get(): Promise<ExportedMetric> {
    const values = this.shownSeries().map((series) => ({ value: series.value, labels: series.labels }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  protected newSeries(labels: Record<string, string | number>): CounterSeries {
    return new CounterSeries(labels);
  }
}

export class HistogramSeries implements Series {
  /** Observations in each bucket alone (not cumulative); one past the last bound is above them all. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  shown = false;

  constructor(
    readonly labels: Record<string, string | number>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket += 1;
    if (bucket < bounds.length) this.counts[bucket]! += 1;
    this.sum += value;
    this.count += 1;
    this.shown = true;
  }

  zero(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/** A histogram family (prom-client's `Histogram`, without exemplars). */
export class Histogram<Label extends string = string> extends Family<Label, HistogramSeries> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly Label[], buckets: readonly number[]) {
    if ((labelNames as readonly string[]).includes('le')) throw new Error('le is a reserved label keyword');
    super(name, help, labelNames);
    this.buckets = [...buckets];
    this.reset();
  }

  observe(value: number): void;
  observe(labels: LabelValues<Label>, value: number): void;
  observe(labelsOrValue: LabelValues<Label> | number, value?: number): void {
    if (typeof labelsOrValue === 'object') this.seriesOf(labelsOrValue).observe(value!);
    else this.seriesOf({}).observe(labelsOrValue);
  }

  /** What the registry prints: each series' buckets, cumulative, then its sum and count. */
  async getForPromString(): Promise<ExportedMetric> {
    const bucketName = `${this.name}_bucket`;
    const values: ExportedValue[] = [];
    for (const series of this.shownSeries()) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += series.counts[index]!;
        values.push({ labels: { le: bound }, sharedLabels: series.labels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same values with each series' labels beside `le`, as prom-client's `get` answers. */
  async get(): Promise<ExportedMetric> {
    const metric = await this.getForPromString();
    const values = metric.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return { ...metric, values };
  }

  protected newSeries(labels: Record<string, string | number>): HistogramSeries {
    return new HistogramSeries(labels, this.buckets);
  }
}
