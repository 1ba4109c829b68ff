// The V8 heap each service runs with, as the Helm chart gives it in a pod (helm/ota/values.yaml,
// `<component>.nodeHeap`; deploy/test/chart.test.ts holds the two equal).
//
// Left to itself, Node sizes the heap from the memory it can see: a pod's limit where it can read
// it, otherwise the machine's. With the 4 GiB old generation and 32 MiB young generation that the
// project's 24 GiB bench machine gives it, V8 lets the old generation grow to up to four times what
// a full collection left alive before it collects again: garbage that a pod's heap would have
// collected shows as resident memory (docs/performance.md, "A heap sized as the pods size it").
// The local stack, the tests and the benchmarks therefore run each service with its pod's figures.

import { join } from 'node:path';

export interface NodeHeap {
  /** `--max-old-space-size`: about half the container's memory limit. */
  oldSpaceMiB: number;
  /** `--max-semi-space-size`: each half of the young generation. */
  semiSpaceMiB: number;
}

export const SERVICE_HEAPS: Record<'gateway' | 'registry' | 'artifacts' | 'rollout' | 'telemetry', NodeHeap> = {
  gateway: { oldSpaceMiB: 256, semiSpaceMiB: 8 },
  registry: { oldSpaceMiB: 192, semiSpaceMiB: 8 },
  artifacts: { oldSpaceMiB: 256, semiSpaceMiB: 8 },
  // Rollout also holds its cache of device statuses: about 630 B an entry, 300 MiB at the default 500,000.
  rollout: { oldSpaceMiB: 512, semiSpaceMiB: 8 },
  telemetry: { oldSpaceMiB: 192, semiSpaceMiB: 8 },
};

/** The Node.js arguments that give a service its pod's heap: the chart's NODE_OPTIONS. */
export function heapArgsOf(service: keyof typeof SERVICE_HEAPS): string[] {
  const heap = SERVICE_HEAPS[service];
  return [`--max-old-space-size=${heap.oldSpaceMiB}`, `--max-semi-space-size=${heap.semiSpaceMiB}`];
}

/**
 * The Node.js arguments that start a service of the checkout at `rootDir` with its pod's heap:
 * every process of a service that the stack, the tests or the benchmarks start goes through here.
 * `nodeArgs` come after the heap's, so that they may override it.
 */
export function serviceArgsOf(rootDir: string, service: keyof typeof SERVICE_HEAPS, nodeArgs: readonly string[] = []): string[] {
  return [...heapArgsOf(service), ...nodeArgs, join(rootDir, 'services', service, 'dist', 'main.js')];
}
