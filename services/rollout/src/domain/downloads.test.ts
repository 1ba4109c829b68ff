import { downloadOf } from './downloads';

// How a device's image came, read from its `downloaded` report's detail (the device SDK's words:
// device-sdk/README.md, "Delta updates").

test('a downloaded detail says whether a patch was applied, given up, or not used', () => {
  expect(downloadOf('{"delta":"applied","patch_bytes":35618}')).toEqual({ how: 'patch', patchBytes: 35618, failure: '' });
  expect(downloadOf('{"delta":"fell_back","delta_failure":"checksum_mismatch"}')).toEqual({ how: 'fell_back', patchBytes: 0, failure: 'checksum_mismatch' });
  // What a device may send there otherwise is an image downloaded whole, never an error.
  for (const other of ['', '{}', 'not json', '[]', 'null', '{"delta":"applied","patch_bytes":-5}', '{"delta":"applied","patch_bytes":4294967296}', '{"delta":"applied","patch_bytes":"many"}', '{"delta":7}']) {
    const download = downloadOf(other);
    expect({ other, how: download.how === 'patch' ? download.patchBytes : download.how }).toEqual({ other, how: other.includes('applied') ? 0 : 'image' });
  }
});
