import { finerKeyOf, finerKeysOf, profileKeysOf } from './profile-buckets';
import { packDocsOf } from './profile-packs';
import type { DeviceProfileDoc } from './models';

// A pack holds the profiles of one finer bucket: the keys a profile is stored under and the pack
// it belongs to must name the same bucket.

const projectId = '6a1f3c2e-4b7d-4e19-9c52-0d8e7f4a1b63';
const profileOf = (id: string, deviceId: string): DeviceProfileDoc => ({ _id: id, ...profileKeysOf(projectId, id), p: JSON.stringify([deviceId, true, 'stable', 1, 'esp_idf', 'esp32c3', '', '', '', null, '']) });

it("names a device's finer bucket as its profile's k3, one of the 16 of its bucket", () => {
  const id = '5a7c0d2e-0000-4000-8000-000000000001';
  const { k, k3 } = profileKeysOf(projectId, id);
  expect(finerKeyOf(k, id)).toBe(k3);
  expect(finerKeysOf(k)).toHaveLength(16);
  expect(finerKeysOf(k)).toContain(k3);
  expect(new Set(finerKeysOf(k)).size).toBe(16);
});

it('packs each finer bucket of at least PACK_AT profiles into version 1, and leaves the smaller ones', () => {
  const inA = Array.from({ length: 3 }, (_, index) => profileOf(`5a0${index}0000-0000-4000-8000-000000000000`, `a-${index}`));
  const inB = [profileOf('5a1f0000-0000-4000-8000-000000000000', 'b-0')];
  const packs = packDocsOf([...inA, ...inB], 3);
  expect(packs).toHaveLength(1);
  expect(packs[0]).toMatchObject({ _id: `${projectId}/5a0@1`, k: `${projectId}/5a`, k3: `${projectId}/5a0`, v: 1 });
  const entries = JSON.parse(packs[0]!.ps!) as Record<string, unknown[]>;
  expect(Object.keys(entries).sort()).toEqual(inA.map((one) => one._id).sort());
  expect(entries[inA[1]!._id]).toEqual(JSON.parse(inA[1]!.p));
});
