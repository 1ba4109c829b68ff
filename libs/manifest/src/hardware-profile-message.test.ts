import { registry, rollout } from '@ota/proto';
import { profileIn, profileMessage, profileOfMessage, type HardwareProfile } from './index';

// A device's hardware moves from flat fields into the nested `hardware` message over two releases.
// During a rolling upgrade a replica reads messages written by the release before and after its own.

const FULL: HardwareProfile = {
  framework: 'esp_idf',
  chipFamily: 'esp32s3',
  boardId: 'devkitc-1',
  hardwareRevision: 'rev2',
  partitionProfile: 'ota_2mb',
  nvsSchemaVersion: 0,
  securityMode: 'secure_boot_v2',
  // The flat fields of the release before have no place for these: they travel in `hardware` only.
  chipRevision: null,
  secureVersion: null,
};
const SPARSE: HardwareProfile = { ...FULL, boardId: '', hardwareRevision: '', partitionProfile: '', nvsSchemaVersion: null, securityMode: '' };
const PROFILES = { 'every dimension set (NVS version 0)': FULL, 'framework and chip only': SPARSE };

const written = {
  'the previous release (flat fields only)': (profile: HardwareProfile) => profileMessage(profile),
  'this release (hardware and flat fields)': (profile: HardwareProfile) => ({ hardware: profileMessage(profile), ...profileMessage(profile) }),
  'the next release (hardware only)': (profile: HardwareProfile) => ({ hardware: profileMessage(profile) }),
};

const MESSAGES = [
  ['registry.Device', registry.Device],
  ['registry.CreateDeviceRequest', registry.CreateDeviceRequest],
  ['rollout.DeviceForDecision', rollout.DeviceForDecision],
] as const;

describe.each(MESSAGES)('the hardware in %s', (_, codec) => {
  const overTheWire = (fields: object) => codec.decode(codec.encode(codec.fromPartial(fields)).finish());

  const cases = Object.entries(written).flatMap(([release, write]) =>
    Object.entries(PROFILES).map(([name, profile]) => [release, name, profile, write] as const),
  );
  it.each(cases)('is read whole from what %s writes, %s', (_release, _name, profile, write) => {
    expect(profileOfMessage(overTheWire(write(profile)))).toEqual(profile);
  });

  it('is read whole by the previous release, which reads the flat fields only', () => {
    const thisRelease = written['this release (hardware and flat fields)'];
    for (const profile of [FULL, SPARSE]) expect(profileIn(overTheWire(thisRelease(profile)))).toEqual(profile);
  });

  it('carries the chip revision and secure version in the hardware field', () => {
    const profile = { ...FULL, chipRevision: 4, secureVersion: 0 };
    expect(profileOfMessage(overTheWire({ hardware: profileMessage(profile) }))).toEqual(profile);
  });

  it('comes from the hardware field when both are written', () => {
    const message = overTheWire({ hardware: profileMessage(FULL), ...profileMessage(SPARSE) });
    expect(profileOfMessage(message)).toEqual(FULL);
  });
});
