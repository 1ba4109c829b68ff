import { deviceUuid, devicePageKeys } from './device-ids';

describe('deviceUuid', () => {
  const project = '0b9d8a2e-1f3c-4e5a-8b7c-6d5e4f3a2b1c';

  it('is a lowercase version-5 UUID, the same for the same project and device_id', () => {
    const id = deviceUuid(project, 'sensor-1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deviceUuid(project, 'sensor-1')).toBe(id);
  });

  it('differs between devices and between projects', () => {
    expect(deviceUuid(project, 'sensor-1')).not.toBe(deviceUuid(project, 'sensor-2'));
    expect(deviceUuid(project, 'sensor-1')).not.toBe(deviceUuid('1b9d8a2e-1f3c-4e5a-8b7c-6d5e4f3a2b1c', 'sensor-1'));
    // The separator keeps ("a", "b\nc") and ("a\nb", "c") apart.
    expect(deviceUuid('a', 'b\nc')).not.toBe(deviceUuid('a\nb', 'c'));
  });

  it('keeps the ids of devices already stored: the same UUID as every earlier release derived', () => {
    expect(deviceUuid(project, 'sensor-1')).toBe('9c97a207-9d4f-571f-9114-5aa5f1f67050');
  });
});

describe('devicePageKeys', () => {
  it('names one bucket per level, by the first hex digits of the device UUID within the project', () => {
    expect(devicePageKeys('p1', '9c97a207-9d4f-571f-9114-5aa5f1f67050')).toEqual(['p1/9', 'p1/9c', 'p1/9c9']);
  });

  it('spreads devices evenly over a level: no bucket of 4,096 holds twice its share of 200,000 devices', () => {
    const counts = new Map<string, number>();
    for (let index = 0; index < 200_000; index += 1) {
      const key = devicePageKeys('p1', deviceUuid('p1', `unit-${index}`))[2]!;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(counts.size).toBe(4096);
    expect(Math.max(...counts.values())).toBeLessThan((2 * 200_000) / 4096);
  });
});
