// Per-device rollout statuses (docs/api.md, "Rollout statuses") and the order they may advance in. A status only ever
// moves to a higher rank, so late, repeated or reordered events can never move it backwards.

const RANK: Record<string, number> = {
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

/** Events the status endpoint accepts, mapped to the status they record. */
const STATUS_OF_EVENT: Record<string, string> = {
  offered: 'offered',
  download_started: 'download_started',
  downloaded: 'downloaded',
  flashed: 'flashed',
  validated: 'validated',
  reboot: 'reboot',
  // v0.1 devices send `rebooted` after booting the new image; it records the same step.
  rebooted: 'reboot',
  confirmed: 'confirmed',
  failed: 'failed',
  rolled_back: 'rolled_back',
};

export const DEVICE_EVENTS = Object.keys(STATUS_OF_EVENT);

export function statusOfEvent(event: string): string | undefined {
  return STATUS_OF_EVENT[event];
}

export function rankOf(status: string): number {
  return RANK[status] ?? -1;
}

/** A step between the offer and the end: the device reported progress and has not finished. */
export function isInProgress(status: string): boolean {
  return rankOf(status) > RANK.offered! && rankOf(status) < RANK.failed!;
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
  return Object.keys(RANK).find((status) => RANK[status] === rank);
}

export const ROLLOUT_STATUSES = Object.keys(RANK);
