/**
 * The share of the id space that lies before a page cursor: how far a walk through the fleet, or
 * through a rollout's devices, has come. Device ids are UUIDs, which a hash spreads evenly.
 */
export function shareBefore(afterId: string | undefined): number {
  return afterId ? Number.parseInt(afterId.slice(0, 6), 16) / 0x1000000 : 1;
}
