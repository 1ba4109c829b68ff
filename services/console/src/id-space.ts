/**
 * The share of the id space that lies before a page cursor: how far a walk through the fleet, or
 * through a rollout's devices, has come. Device ids are UUIDs, which a hash spreads evenly.
 */
export function shareBefore(afterId: string | undefined): number {
  return afterId ? Number.parseInt(afterId.slice(0, 6), 16) / 0x1000000 : 1;
}

/**
 * The hex prefixes of the parts of the id space, 16 of one digit or 256 of two, in bit-reversed
 * order (0, 8, 4, c, …): the parts read so far are always spread over the whole id space, so their
 * shares estimate the fleet's from the first parts on.
 */
export function partsOf(count: 16 | 256): string[] {
  const bits = count === 16 ? 4 : 8;
  const reversed = (index: number) => Number.parseInt(index.toString(2).padStart(bits, '0').split('').reverse().join(''), 2);
  return Array.from({ length: count }, (_, index) => reversed(index).toString(16).padStart(bits / 4, '0'));
}
