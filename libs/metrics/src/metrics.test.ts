import { ServiceMetrics, boundedLabel } from './index';

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
