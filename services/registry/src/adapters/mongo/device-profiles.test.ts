import { changedProfile, profileDocOf, type ProfiledDoc } from './device-profiles';

// A check writes the device's profile only when its heartbeat changes what a preview decides on.

const stored: ProfiledDoc = {
  _id: '3fa0c2d4e5f60718293a4b5c6d7e8f90',
  project_id: 'p1',
  device_id: 'unit-1',
  active: true,
  channel_id: 'stable',
  current_build_number: 4,
  framework: 'esp_idf',
  chip_family: 'esp32c3',
  board_id: '',
  hardware_revision: '',
  partition_profile: '',
  nvs_schema_version: null,
  security_mode: '',
  chip_revision: null,
  secure_version: null,
};

describe('changedProfile', () => {
  it('is false for a heartbeat that repeats the stored hardware, or sends a blank the store left out', () => {
    expect(changedProfile(stored, { framework: 'esp_idf', chip_family: 'esp32c3' })).toBe(false);
    const { board_id: _omitted, ...withoutBoard } = stored;
    expect(changedProfile(withoutBoard as ProfiledDoc, { board_id: '' })).toBe(false);
  });

  it('is true for other hardware, and the profile then holds it', () => {
    expect(changedProfile(stored, { chip_family: 'esp32s3' })).toBe(true);
    expect(changedProfile(stored, { nvs_schema_version: 0 })).toBe(true);
    expect(JSON.parse(profileDocOf({ ...stored, chip_family: 'esp32s3' }).p)).toContain('esp32s3');
  });

  it('keeps the profile in its buckets of two and of three hex digits', () => {
    expect([profileDocOf(stored).k, profileDocOf(stored).k3]).toEqual(['p1/3f', 'p1/3fa']);
  });
});
