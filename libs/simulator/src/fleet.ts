import { createHash } from 'node:crypto';

/** What a virtual device does when it is offered a build. */
export type Behaviour = 'succeed' | 'fail' | 'roll_back' | 'signature_invalid' | 'go_silent';

export interface InjectedShares {
  /** Share of devices that report `failed` (`flash_write_failed`). */
  fail: number;
  /** Share of devices that report `rolled_back` (`confirm_timeout`). */
  rollBack: number;
  /** Share of devices that report `failed` with `signature_invalid`. */
  signatureInvalid: number;
  /** Share of devices that install the build, report up to `reboot`, and then say nothing more. */
  silent: number;
}

/**
 * Assigns each device its behaviour. The shares are exact (round(share × devices) devices each)
 * and the choice depends only on the seed and the ids, so a run can be repeated and checked.
 */
export function assignBehaviours(deviceIds: readonly string[], shares: InjectedShares, seed: string): Map<string, Behaviour> {
  const order = [...deviceIds].sort((a, b) => rank(seed, a).localeCompare(rank(seed, b)));
  const counts: Array<[Behaviour, number]> = [
    ['fail', Math.round(shares.fail * deviceIds.length)],
    ['roll_back', Math.round(shares.rollBack * deviceIds.length)],
    ['signature_invalid', Math.round(shares.signatureInvalid * deviceIds.length)],
    ['go_silent', Math.round(shares.silent * deviceIds.length)],
  ];
  const total = counts.reduce((sum, [, count]) => sum + count, 0);
  if (total > deviceIds.length) throw new Error('the injected shares add up to more than the fleet');
  const behaviours = new Map<string, Behaviour>();
  let next = 0;
  for (const [behaviour, count] of counts) {
    for (let i = 0; i < count; i += 1) behaviours.set(order[next++]!, behaviour);
  }
  for (const id of order.slice(next)) behaviours.set(id, 'succeed');
  return behaviours;
}

function rank(seed: string, deviceId: string): string {
  return createHash('sha256').update(seed).update('\0').update(deviceId).digest('hex');
}

/**
 * Gives each device one of the chip revisions (major × 100 + minor), in equal shares (the first
 * revisions take the remainder), chosen by the seed and the ids as behaviours are.
 */
export function assignChipRevisions(deviceIds: readonly string[], revisions: readonly number[], seed: string): Map<string, number> {
  const assigned = new Map<string, number>();
  if (revisions.length === 0) return assigned;
  const order = [...deviceIds].sort((a, b) => rank(`${seed}:chip`, a).localeCompare(rank(`${seed}:chip`, b)));
  order.forEach((id, index) => assigned.set(id, revisions[index % revisions.length]!));
  return assigned;
}
