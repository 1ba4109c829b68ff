import { invalidArgument } from '@ota/errors';
import { rankOf } from './device-status';

/**
 * How fast a deployment may start updates (docs/api.md, "Offer caps"): at most `offersPerMinute`
 * new offers in each minute of the clock, and at most `maxInProgress` devices between `offered`
 * and a terminal status at once. The rest are told to check again later. null: no such cap.
 */
export interface OfferCaps {
  offersPerMinute: number | null;
  maxInProgress: number | null;
}

export const MAX_OFFERS_PER_MINUTE = 100_000;

export function validOfferCaps(caps: OfferCaps): OfferCaps {
  const { offersPerMinute, maxInProgress } = caps;
  if (offersPerMinute !== null && (!Number.isInteger(offersPerMinute) || offersPerMinute < 1 || offersPerMinute > MAX_OFFERS_PER_MINUTE)) {
    throw invalidArgument(`caps.offers_per_minute must be an integer from 1 to ${MAX_OFFERS_PER_MINUTE}`);
  }
  if (maxInProgress !== null && (!Number.isInteger(maxInProgress) || maxInProgress < 1)) throw invalidArgument('caps.max_in_progress must be an integer of at least 1');
  return caps;
}

export function hasOfferCaps(caps: OfferCaps | null): caps is OfferCaps {
  return caps !== null && (caps.offersPerMinute !== null || caps.maxInProgress !== null);
}

/** The start of the clock minute `at` is in: offers per minute are counted per clock minute. */
export function minuteOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 60_000) * 60_000);
}

/** Devices between `offered` (included) and a terminal status, from the deployment's counts per status. */
export function devicesInProgress(byStatus: ReadonlyMap<string, number>): number {
  let devices = 0;
  for (const [status, count] of byStatus) if (rankOf(status) >= rankOf('offered') && rankOf(status) < rankOf('failed')) devices += count;
  return devices;
}

/** How long a replica trusts its read of a deployment's devices in progress (the counts' own flush interval). */
export const IN_PROGRESS_READ_MS = 1_000;

/**
 * Each deployment's devices in progress as this replica last read them, read again at most once
 * per IN_PROGRESS_READ_MS however many checks ask, plus the offers this replica made since: a
 * wake storm reads the counts once a second, not once per device. A place is reserved in one
 * synchronous step after the read, so that the checks of one replica racing for the last place
 * take it once.
 */
export class InProgressCounts {
  private readonly reads = new Map<string, { at: number; devices: Promise<number>; offeredSince: number }>();

  constructor(
    private readonly readDevices: (deploymentId: string) => Promise<number>,
    private readonly now: () => number,
  ) {}

  /**
   * Takes a place for a new offer when fewer than `max` devices are in progress; false when none is
   * left. A device back from a deferral is among the devices read already (its status is in
   * progress again): `counted` makes room for it among them, taking nothing more.
   */
  async reserve(deploymentId: string, max: number, counted = false): Promise<boolean> {
    let read = this.reads.get(deploymentId);
    if (!read || this.now() - read.at >= IN_PROGRESS_READ_MS) {
      read = { at: this.now(), devices: this.readDevices(deploymentId), offeredSince: 0 };
      this.reads.set(deploymentId, read);
      const made = read;
      // A failed read is not kept: the next asks again.
      made.devices.catch(() => this.reads.get(deploymentId) === made && this.reads.delete(deploymentId));
    }
    const devices = await read.devices;
    // From here to the return nothing awaits: the check and the reservation are one step.
    if (counted) return devices - 1 + read.offeredSince < max;
    if (devices + read.offeredSince >= max) return false;
    read.offeredSince += 1;
    return true;
  }

  /** Gives back a place reserved for an offer that was not made after all. */
  release(deploymentId: string): void {
    const read = this.reads.get(deploymentId);
    if (read && read.offeredSince > 0) read.offeredSince -= 1;
  }
}
