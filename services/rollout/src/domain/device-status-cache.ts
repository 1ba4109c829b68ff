import { rankOf } from './device-status';

export interface DeviceStatusEntry {
  /** The device's highest status in the deployment. */
  status: string;
  rank: number;
  /** Whether it ever reported rolled_back (then it is not offered the deployment again). */
  rolledBack: boolean;
  /**
   * The status its counts hold it under, as this replica last saw it (CountedStep): a hint, which a
   * step taken elsewhere may have passed; unknown when absent.
   */
  counted?: string;
}

export const NO_STATUS: DeviceStatusEntry = { status: 'pending', rank: rankOf('pending'), rolledBack: false };

/**
 * Each (deployment, device)'s highest status, in memory, so that the check and status paths do not
 * read the store for it. The stored events remain the truth: an entry only ever rises, from this
 * replica's own writes, from other replicas' NATS broadcasts, and from the store on a miss. The
 * oldest entries are dropped beyond `maxEntries`, and read from the store again when needed.
 */
export class DeviceStatusCache {
  private readonly entries = new Map<string, DeviceStatusEntry>();

  constructor(private readonly maxEntries: number) {}

  get(deploymentId: string, deviceUuid: string): DeviceStatusEntry | undefined {
    return this.entries.get(`${deploymentId}:${deviceUuid}`);
  }

  /** Combines what is known with `incoming`: the higher status wins, rolled_back sticks, and so does the higher counted status. */
  merge(deploymentId: string, deviceUuid: string, incoming: DeviceStatusEntry): DeviceStatusEntry {
    const key = `${deploymentId}:${deviceUuid}`;
    const known = this.entries.get(key);
    const higher =
      known && known.rank >= incoming.rank
        ? { ...known, rolledBack: known.rolledBack || incoming.rolledBack }
        : { ...incoming, rolledBack: incoming.rolledBack || (known?.rolledBack ?? false) };
    const counted = higherOf(known?.counted, incoming.counted);
    const merged: DeviceStatusEntry = { status: higher.status, rank: higher.rank, rolledBack: higher.rolledBack, ...(counted !== undefined ? { counted } : {}) };
    // Re-inserting moves the key to the end: the map's order is the order of last use.
    this.entries.delete(key);
    this.entries.set(key, merged);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return merged;
  }

  /** Forgets everything: after missing broadcasts, an entry may be lower than the store's truth. */
  clear(): void {
    this.entries.clear();
  }

  /** Forgets a device (it was deleted): a linear pass, for a rare developer action. */
  forgetDevice(deviceUuid: string): void {
    for (const key of this.entries.keys()) if (key.endsWith(`:${deviceUuid}`)) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Heap a cache entry takes: its key of two UUIDs and its entry object. Measured by filling a
 * DeviceStatusCache with 500,000 and with 1,000,000 entries: 300 and 600 MiB live
 * (docs/performance.md, "A heap sized as the pods size it").
 */
export const HEAP_BYTES_PER_STATUS_ENTRY = 630;
/**
 * Heap rollout needs besides a full cache: at its measured peak, a preview of a million devices, it
 * held 122 MiB in use (docs/performance.md, "Bulk changes two buckets at once, and from the memberships").
 */
export const HEAP_BYTES_BESIDE_STATUS_CACHE = 160 * 2 ** 20;

/**
 * Why a cache of `maxEntries` would not fit in a heap of `heapLimitBytes` beside the rest of
 * rollout, or null when it fits. A cache that does not fit is found out only once it fills, under
 * load, when the process runs out of heap: rollout refuses to start with it instead.
 */
export function statusCacheOverHeap(maxEntries: number, heapLimitBytes: number): string | null {
  const needed = maxEntries * HEAP_BYTES_PER_STATUS_ENTRY + HEAP_BYTES_BESIDE_STATUS_CACHE;
  if (needed <= heapLimitBytes) return null;
  const mib = (bytes: number) => Math.ceil(bytes / 2 ** 20);
  return (
    `DEVICE_STATUS_CACHE_ENTRIES=${maxEntries} would take ${mib(maxEntries * HEAP_BYTES_PER_STATUS_ENTRY)} MiB of heap when full (about ${HEAP_BYTES_PER_STATUS_ENTRY} B an entry), ` +
    `and rollout needs ${mib(HEAP_BYTES_BESIDE_STATUS_CACHE)} MiB besides: ${mib(needed)} MiB, more than this process's heap of ${mib(heapLimitBytes)} MiB. ` +
    'Lower DEVICE_STATUS_CACHE_ENTRIES, or raise the heap (--max-old-space-size in NODE_OPTIONS; the chart\'s rollout.nodeHeap.oldSpaceMiB) and the memory limit with it'
  );
}

/** The higher-ranked of two statuses, either of which may be unknown. */
function higherOf(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return rankOf(b) > rankOf(a) ? b : a;
}
