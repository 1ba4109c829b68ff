// Per-device rollout statuses (docs/api.md, "Rollout statuses") and the order they may advance in. A status only ever
// moves to a higher rank, so late, repeated or reordered events can never move it backwards.
import { ROLLOUT_STATUSES, type RolloutStatus } from '@ota/vocabulary';

/** Each status's rank: a status only moves up. Typed by the vocabulary, so a new status needs one. */
const RANK: Record<RolloutStatus, number> = {
  pending: 0,
  offered: 1,
  download_started: 2,
  downloaded: 3,
  flashed: 4,
  validated: 5,
  reboot: 6,
  failed: 7,
  rolled_back: 8,
  confirmed: 9,
};

export { DEVICE_EVENTS, ROLLOUT_STATUSES, statusOfEvent } from '@ota/vocabulary';

export function rankOf(status: string): number {
  return RANK[status as RolloutStatus] ?? -1;
}

/** A step between the offer and the end: the device reported progress and has not finished. */
export function isInProgress(status: string): boolean {
  return rankOf(status) > RANK.offered && rankOf(status) < RANK.failed;
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
  return ROLLOUT_STATUSES.find((status) => RANK[status] === rank);
}

