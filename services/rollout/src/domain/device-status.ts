// Per-device rollout statuses (docs/api.md, "Rollout statuses") and the order they may advance in. A status only ever
// moves to a higher rank, so late, repeated or reordered events can never move it backwards.
import { ROLLOUT_STATUSES, rankOf } from '@ota/vocabulary';

export { DEVICE_EVENTS, ROLLOUT_STATUSES, rankOf, statusOfEvent } from '@ota/vocabulary';

/** A step between the offer and the end: the device reported progress and has not finished. */
export function isInProgress(status: string): boolean {
  return rankOf(status) > rankOf('offered') && rankOf(status) < rankOf('failed');
}

/**
 * Each status a device reached is stored with the bit `2 ** rank`, so that the sum of a device's
 * bits says every status it reached, and the highest set bit is its current status. This lets the
 * store count devices per current status with `$group`/`$sum` alone (all FerretDB v1 offers).
 */
export function bitOf(status: string): number {
  return 2 ** rankOf(status);
}

/** The status a sum of `bitOf` values stands for: its highest set bit; undefined for 0. */
export function statusOfBits(bits: number): string | undefined {
  if (bits < 1) return undefined;
  const rank = Math.floor(Math.log2(bits));
  return ROLLOUT_STATUSES.find((status) => rankOf(status) === rank);
}

