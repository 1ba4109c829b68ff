import { DeviceStatusCache, statusCacheOverHeap } from './device-status-cache';

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

describe('statusCacheOverHeap', () => {
  // V8's heap limit is the old generation and three semi-spaces (the chart's rollout: 512 + 3 × 8 MiB).
  const heapOf = (oldSpaceMiB: number, semiSpaceMiB = 8) => (oldSpaceMiB + 3 * semiSpaceMiB) * 2 ** 20;

  it('lets the default 500,000 entries run in the chart\'s heap for rollout', () => {
    expect(statusCacheOverHeap(500_000, heapOf(512))).toBeNull();
  });

  it('refuses a cache that would outgrow the heap when full, saying what it needs and what to change', () => {
    expect(statusCacheOverHeap(1_000_000, heapOf(512))).toBe(
      'DEVICE_STATUS_CACHE_ENTRIES=1000000 would take 601 MiB of heap when full (about 630 B an entry), and rollout needs 160 MiB besides: 761 MiB, ' +
        "more than this process's heap of 536 MiB. Lower DEVICE_STATUS_CACHE_ENTRIES, or raise the heap (--max-old-space-size in NODE_OPTIONS; " +
        "the chart's rollout.nodeHeap.oldSpaceMiB) and the memory limit with it",
    );
    // 384 MiB, which the measured runs gave rollout, would not hold the default cache beside the rest.
    expect(statusCacheOverHeap(500_000, heapOf(384))).toContain('more than this process\'s heap of 408 MiB');
    expect(statusCacheOverHeap(1_000_000, heapOf(1024))).toBeNull();
  });
});
