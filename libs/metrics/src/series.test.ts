import * as prom from 'prom-client';
import { Counter, Histogram } from './series';

/** Two registries with the same default label: ours holds our family, the other prom-client's own. */
function registries() {
  const [ours, theirs] = [new prom.Registry(), new prom.Registry()];
  for (const registry of [ours, theirs]) registry.setDefaultLabels({ ota_component: 'registry' });
  return { ours, theirs };
}

const BUCKETS = [0.001, 0.01, 0.1, 1];

/** Our counter with a `code` label in one registry, prom-client's of the same name in the other. */
function counterBesideTheirs() {
  const { ours, theirs } = registries();
  const mine = new Counter('ota_example_total', 'An example.', ['code']);
  ours.registerMetric(mine as never);
  new prom.Counter({ name: 'ota_example_total', help: 'An example.', labelNames: ['code'], registers: [theirs] });
  return { ours, theirs, mine };
}

it('prints a histogram as prom-client prints its own, series by series', async () => {
  const { ours, theirs } = registries();
  const mine = new Histogram('ota_example_seconds', 'An example.', ['method', 'route'], BUCKETS);
  ours.registerMetric(mine as never);
  const reference = new prom.Histogram({ name: 'ota_example_seconds', help: 'An example.', labelNames: ['method', 'route'], buckets: BUCKETS, registers: [theirs] });
  const held = mine.seriesOf({ method: 'POST', route: '/check' });
  for (const [labels, value] of [
    [{ method: 'POST', route: '/check' }, 0.0005],
    [{ method: 'POST', route: '/check' }, 0.001],
    [{ method: 'GET', route: 'unmatched' }, 0.05],
    [{ method: 'GET', route: 'unmatched' }, 7],
    [{ method: 'GET' }, 0.2],
    [{ method: 'POST', route: '/check' }, 0],
  ] as const) {
    if (labels.method === 'POST') held.observe(value);
    else mine.observe(labels, value);
    reference.observe(labels, value);
  }
  expect(await ours.metrics()).toBe(await theirs.metrics());
  expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
});

it('prints a histogram without labels at zero before its first observation, as prom-client does', async () => {
  const { ours, theirs } = registries();
  const mine = new Histogram('ota_example_seconds', 'An example.', [], BUCKETS);
  ours.registerMetric(mine as never);
  const reference = new prom.Histogram({ name: 'ota_example_seconds', help: 'An example.', buckets: BUCKETS, registers: [theirs] });
  expect(await ours.metrics()).toBe(await theirs.metrics());
  mine.observe(0.02);
  reference.observe(0.02);
  expect(await ours.metrics()).toBe(await theirs.metrics());
});

it('prints a counter as prom-client prints its own, with and without labels', async () => {
  const { ours, theirs } = registries();
  const mine = new Counter('ota_example_total', 'An example.', ['code']);
  const plain = new Counter('ota_plain_total', 'Another.', []);
  ours.registerMetric(mine as never);
  ours.registerMetric(plain as never);
  const reference = new prom.Counter({ name: 'ota_example_total', help: 'An example.', labelNames: ['code'], registers: [theirs] });
  const plainReference = new prom.Counter({ name: 'ota_plain_total', help: 'Another.', registers: [theirs] });
  expect(await ours.metrics()).toBe(await theirs.metrics());
  const ok = mine.seriesOf({ code: 'OK' });
  ok.inc();
  ok.inc(2);
  reference.inc({ code: 'OK' });
  reference.inc({ code: 'OK' }, 2);
  mine.inc({ code: 'Unavailable' }, 0);
  reference.inc({ code: 'Unavailable' }, 0);
  mine.inc({});
  reference.inc({});
  plain.inc(0.5);
  plainReference.inc(0.5);
  expect(await ours.metrics()).toBe(await theirs.metrics());
  expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
});

it('refuses what prom-client refuses', () => {
  const counter = new Counter('ota_example_total', 'An example.', ['code']);
  expect(() => counter.inc({ code: 'OK' }, -1)).toThrow('It is not possible to decrease a counter');
  expect(() => counter.inc({ kind: 'x' } as never)).toThrow(/not included in initial labelset/);
  expect(() => new Histogram('ota_example_seconds', 'An example.', ['le'], BUCKETS)).toThrow(/reserved/);
  expect(() => new Histogram('ota_example_seconds', 'An example.', [], BUCKETS).observe(Number.NaN)).toThrow(/not a valid number/);
  expect(() => new Counter('ota example', 'An example.', [])).toThrow('Invalid metric name');
});

it('keeps a label left out apart from a label set to the empty string', () => {
  const counter = new Counter('ota_example_total', 'An example.', ['code', 'kind']);
  expect(counter.seriesOf({ code: '' })).not.toBe(counter.seriesOf({}));
  expect(counter.seriesOf({ code: 'a', kind: 'b' })).toBe(counter.seriesOf({ kind: 'b', code: 'a' }));
});

it('starts again from nothing after a reset', async () => {
  const { ours, theirs, mine } = counterBesideTheirs();
  mine.inc({ code: 'OK' });
  ours.resetMetrics();
  expect(await ours.metrics()).toBe(await theirs.metrics());
});

it("keeps a held series the family's own across a reset", async () => {
  const { ours, theirs } = registries();
  const mine = new Histogram('ota_example_seconds', 'An example.', ['method'], BUCKETS);
  ours.registerMetric(mine as never);
  const reference = new prom.Histogram({ name: 'ota_example_seconds', help: 'An example.', labelNames: ['method'], buckets: BUCKETS, registers: [theirs] });
  const held = mine.seriesOf({ method: 'POST' });
  held.observe(0.5);
  reference.observe({ method: 'POST' }, 0.5);
  ours.resetMetrics();
  theirs.resetMetrics();
  expect(await ours.metrics()).toBe(await theirs.metrics());
  held.observe(0.002);
  reference.observe({ method: 'POST' }, 0.002);
  expect(await ours.metrics()).toBe(await theirs.metrics());
});

it('prints a series only once it is used, as prom-client prints only what it was given', async () => {
  const { ours, theirs, mine } = counterBesideTheirs();
  mine.seriesOf({ code: 'OK' });
  expect(await ours.metrics()).toBe(await theirs.metrics());
});
