import { DeviceStatusCache } from './device-status-cache';

const entry = (status: string, rank: number, rolledBack = false) => ({ status, rank, rolledBack });

describe('DeviceStatusCache', () => {
  it('only ever rises, and keeps rolled_back once seen', () => {
    const cache = new DeviceStatusCache(10);
    cache.merge('d', 'x', entry('flashed', 4));
    expect(cache.merge('d', 'x', entry('downloaded', 3))).toEqual(entry('flashed', 4));
    expect(cache.merge('d', 'x', entry('rolled_back', 8, true))).toEqual(entry('rolled_back', 8, true));
    expect(cache.merge('d', 'x', entry('confirmed', 9))).toEqual(entry('confirmed', 9, true));
  });

  it('drops the least recently used entry beyond its size', () => {
    const cache = new DeviceStatusCache(2);
    cache.merge('d', 'a', entry('offered', 1));
    cache.merge('d', 'b', entry('offered', 1));
    cache.merge('d', 'a', entry('downloaded', 3));
    cache.merge('d', 'c', entry('offered', 1));
    expect(cache.get('d', 'b')).toBeUndefined();
    expect(cache.get('d', 'a')).toEqual(entry('downloaded', 3));
    expect(cache.size).toBe(2);
  });

  it('forgets one device, or everything', () => {
    const cache = new DeviceStatusCache(10);
    cache.merge('d1', 'x', entry('offered', 1));
    cache.merge('d2', 'x', entry('flashed', 4));
    cache.merge('d1', 'y', entry('offered', 1));
    cache.forgetDevice('x');
    expect([cache.get('d1', 'x'), cache.get('d2', 'x'), cache.size]).toEqual([undefined, undefined, 1]);
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
