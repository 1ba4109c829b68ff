import { ServiceMetrics } from '@ota/metrics';
import { downloadOf, rolloutMetrics } from './rollout-metrics';

// How a device's image came, read from its `downloaded` report's detail (the device SDK's words:
// device-sdk/README.md, "Delta updates"), and what the counters make of it.

test('a downloaded detail says whether a patch was applied, given up, or not used', () => {
  expect(downloadOf('{"delta":"applied","patch_bytes":35618}')).toEqual({ how: 'patch', patchBytes: 35618, failure: '' });
  expect(downloadOf('{"delta":"fell_back","delta_failure":"checksum_mismatch"}')).toEqual({ how: 'fell_back', patchBytes: 0, failure: 'checksum_mismatch' });
  // What a device may send there otherwise is an image downloaded whole, never an error.
  for (const other of ['', '{}', 'not json', '[]', 'null', '{"delta":"applied","patch_bytes":-5}', '{"delta":"applied","patch_bytes":"many"}', '{"delta":7}']) {
    const download = downloadOf(other);
    expect({ other, how: download.how === 'patch' ? download.patchBytes : download.how }).toEqual({ other, how: other.includes('applied') ? 0 : 'image' });
  }
});

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
