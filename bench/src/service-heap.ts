import { scrapeMetrics } from './service-pauses';

// What a service's own metrics say of its JavaScript heap at one moment: whether its resident
// memory is the heap (and of it, the young generation) or memory outside it.

export interface HeapReading {
  /** The heap V8 has reserved and what of it holds objects, MiB. */
  totalMiB: number;
  usedMiB: number;
  /** The young generation's reserved size, MiB (up to three times --max-semi-space-size). */
  newSpaceMiB: number;
  /** Memory of buffers and other objects outside the heap, MiB. */
  externalMiB: number;
}

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** The heap of the service whose Prometheus endpoint is `url`; undefined when it does not answer. */
export function heapOf(url: string): Promise<HeapReading | undefined> {
  return scrapeMetrics(url, (total) => ({
    totalMiB: mib(total('nodejs_heap_size_total_bytes')),
    usedMiB: mib(total('nodejs_heap_size_used_bytes')),
    newSpaceMiB: mib(total('nodejs_heap_space_size_total_bytes', (labels) => labels.includes('space="new"'))),
    externalMiB: mib(total('nodejs_external_memory_bytes')),
  }));
}
