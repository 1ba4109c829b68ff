import { createHash } from 'node:crypto';

/**
 * The device's cohort bucket for one deployment, 0..99. It depends only on the two ids, so it is
 * the same on every check and every replica; hashing the pair (not the device alone) draws an
 * independent cohort for each deployment, so the same devices are not always the canaries.
 */
export function cohortBucket(deploymentId: string, deviceId: string): number {
  const digest = createHash('sha256').update(deploymentId).update(':').update(deviceId).digest();
  // 2^32 mod 100 = 96, so the modulo bias is below one part in 40 million.
  return digest.readUInt32BE(0) % 100;
}

/** Admission is `bucket < percentage`: raising the percentage only ever adds devices. */
export function admittedByRollout(deploymentId: string, deviceId: string, rolloutPercentage: number): boolean {
  return cohortBucket(deploymentId, deviceId) < rolloutPercentage;
}
