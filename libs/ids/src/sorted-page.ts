/** Orders by UUID, the order of every page of a device list. */
export function byUuid(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The page after `afterId` of matches already sorted by UUID, read whole (a small set): exact
 * count, and the next page's start when more follow.
 */
export function pageOfSorted<T>(sorted: T[], idOf: (item: T) => string, limit: number, afterId: string | undefined): { items: T[]; total: { count: number; estimated: false }; nextAfterId?: string } {
  const after = afterId ? sorted.filter((item) => idOf(item) > afterId) : sorted;
  return {
    items: after.slice(0, limit),
    total: { count: sorted.length, estimated: false },
    nextAfterId: after.length > limit ? idOf(after[limit - 1]!) : undefined,
  };
}
