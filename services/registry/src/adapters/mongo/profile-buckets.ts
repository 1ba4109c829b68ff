// The buckets a device's profile is kept in (device-profiles.ts): keys that follow from the
// project and the device's UUID alone, so that a write of the profile never changes them.
import { devicePageKey } from '@ota/ids';

/** The page bucket level of a profile's key `k`: 256 buckets, the parts a preview of a large fleet is read in. */
export const PROFILE_BUCKET_LEVEL = 2;
/**
 * The page bucket level of a profile's key `k3`: 4,096 buckets, which a count samples and a pack
 * holds (profile-packs.ts). At a million devices one holds about 244, so a sample of about
 * DEVICE_COUNT_SAMPLE reads a few of them rather than one bucket of `k` (about 3,900;
 * docs/performance.md, "Counts from the finer profile buckets").
 */
export const PROFILE_COUNT_BUCKET_LEVEL = 3;

/** A profile's bucket keys. */
export function profileKeysOf(projectId: string, id: string): { k: string; k3: string } {
  return { k: devicePageKey(projectId, id.slice(0, PROFILE_BUCKET_LEVEL)), k3: devicePageKey(projectId, id.slice(0, PROFILE_COUNT_BUCKET_LEVEL)) };
}

/** The finer key (`k3`) of the device `id` whose profile is in the bucket `k`: the bucket's key with the UUID's next hex digits. */
export function finerKeyOf(k: string, id: string): string {
  return k + id.slice(PROFILE_BUCKET_LEVEL, PROFILE_COUNT_BUCKET_LEVEL);
}

/** Every finer key (`k3`) of the bucket `k`. */
export function finerKeysOf(k: string): string[] {
  const digits = PROFILE_COUNT_BUCKET_LEVEL - PROFILE_BUCKET_LEVEL;
  return Array.from({ length: 16 ** digits }, (_, index) => k + index.toString(16).padStart(digits, '0'));
}

/** The profile buckets (`k`) that hold the devices whose UUID begins with `idPrefix` (0 to 3 hex digits). */
export function bucketsOf(projectId: string, idPrefix: string): string[] {
  if (idPrefix.length >= PROFILE_BUCKET_LEVEL) return [devicePageKey(projectId, idPrefix.slice(0, PROFILE_BUCKET_LEVEL))];
  const rest = PROFILE_BUCKET_LEVEL - idPrefix.length;
  return Array.from({ length: 16 ** rest }, (_, index) => devicePageKey(projectId, idPrefix + index.toString(16).padStart(rest, '0')));
}
