import { ServiceMetrics } from '@ota/metrics';
import { rolloutMetrics } from './rollout-metrics';

// What the counters make of how devices' images came (domain/downloads.ts reads it).

test('the counters: downloads by how, patch bytes, and fallbacks by a bounded reason', async () => {
  const metrics = new ServiceMetrics('rollout');
  const rollout = rolloutMetrics(metrics, { liveDeployments: async () => [], countsOf: async () => ({ byStatus: new Map(), failuresByReason: new Map() }) });
  rollout.reportStored('downloaded', '', '{"delta":"applied","patch_bytes":1000}');
  rollout.reportStored('downloaded', '', '{"delta":"applied","patch_bytes":234}');
  rollout.reportStored('downloaded', '', '{"delta":"fell_back","delta_failure":"patch_unavailable"}');
  rollout.reportStored('downloaded', '', '{"delta":"fell_back","delta_failure":"a reason no SDK sends"}');
  rollout.reportStored('downloaded', '', '');
  rollout.reportStored('flashed', '', '{"delta":"applied","patch_bytes":99}');
  const text = await metrics.registry.metrics();
  const value = (name: string, label = '') => Number(new RegExp(`^${name}\\{${label}[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1]);
  expect([value('ota_device_downloads_total', 'how="patch"'), value('ota_device_downloads_total', 'how="fell_back"'), value('ota_device_downloads_total', 'how="image"')]).toEqual([2, 2, 1]);
  expect(value('ota_delta_patch_bytes_total')).toBe(1234);
  expect([value('ota_delta_fallbacks_total', 'delta_failure="patch_unavailable"'), value('ota_delta_fallbacks_total', 'delta_failure="other"')]).toEqual([1, 1]);
});
