import { ServiceMetrics, boundedLabel, sharedRead } from './index';

it('serves a family only once it is declared, and the same family to every declaration', async () => {
  const metrics = new ServiceMetrics('registry');
  expect(await metrics.registry.metrics()).not.toContain('ota_example_total');
  const first = metrics.counter('ota_example_total', 'An example.', ['kind']);
  expect(metrics.counter('ota_example_total', 'An example.', ['kind'])).toBe(first);
  first.inc({ kind: 'a' });
  expect(await metrics.registry.metrics()).toContain('ota_example_total{kind="a",ota_component="registry"} 1');
  expect(() => metrics.gauge('ota_example_total', 'Not a gauge.')).toThrow(/another type/);
});

it('reads a gauge with a collect callback when scraped', async () => {
  const metrics = new ServiceMetrics('rollout');
  let value = 1;
  metrics.gauge('ota_example_value', 'An example.', [], (gauge) => {
    gauge.set(value);
  });
  expect(await metrics.registry.metrics()).toContain('ota_example_value{ota_component="rollout"} 1');
  value = 2;
  expect(await metrics.registry.metrics()).toContain('ota_example_value{ota_component="rollout"} 2');
});

it('bounds labels that come from outside', () => {
  const known = new Set(['signature_invalid']);
  expect(boundedLabel('signature_invalid', known)).toBe('signature_invalid');
  expect(boundedLabel('something a device made up', known)).toBe('other');
  expect(boundedLabel('', known)).toBe('none');
  expect(boundedLabel(undefined, known)).toBe('none');
});

it('shares one read among the gauges of a scrape, keeps it as long as asked, and never fails a scrape', async () => {
  let reads = 0;
  let failing = false;
  const read = sharedRead(async () => {
    reads += 1;
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (failing) throw new Error('the store is away');
    return reads;
  });
  expect(await Promise.all([read(), read(), read()])).toEqual([1, 1, 1]);
  expect(await read()).toBe(2);

  const metrics = new ServiceMetrics('telemetry');
  metrics.gauge('ota_example_pending', 'An example.', [], async (gauge) => {
    const value = await read();
    if (value !== undefined) gauge.set(value);
  });
  expect(await metrics.registry.metrics()).toContain('ota_example_pending{ota_component="telemetry"} 3');
  failing = true;
  // The read fails: the scrape answers, with the gauge as it last was.
  expect(await metrics.registry.metrics()).toContain('ota_example_pending{ota_component="telemetry"} 3');

  let kept = 0;
  const cached = sharedRead(async () => (kept += 1), 60_000);
  expect([await cached(), await cached()]).toEqual([1, 1]);
});
