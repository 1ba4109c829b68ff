import type { Device } from './model';

/** Why a stored device's check stops before its decision (docs/api.md, "The check decision", step 3). */
export type HeartbeatRefusal = 'inactive' | 'token_required';

interface RefusalCondition {
  refusal: HeartbeatRefusal;
  /** The device's field, and the value of it that refuses. */
  field: 'active' | 'tokenRequired';
  refusedWhen: boolean;
  /** Whether it refuses only a check made with the shared project token. */
  viaProjectTokenOnly: boolean;
}

/**
 * The heartbeat rule, in its one definition: an inactive device, and a device with its own token
 * checked with the project token, get no heartbeat (last_seen and the reported fields stay as
 * they were) and no decision; their check is still counted and recorded. The domain judges a
 * device by `heartbeatRefusal`; the store's check-in write carries the same conditions in its
 * filter (`heartbeatConditions`), so that the heartbeat and the check's count are one write.
 */
const REFUSAL_CONDITIONS: readonly RefusalCondition[] = [
  { refusal: 'inactive', field: 'active', refusedWhen: false, viaProjectTokenOnly: false },
  { refusal: 'token_required', field: 'tokenRequired', refusedWhen: true, viaProjectTokenOnly: true },
];

/** The conditions that apply to a check made with (or without) the project token, first refusal first. */
export function heartbeatConditions(viaProjectToken: boolean): readonly RefusalCondition[] {
  return REFUSAL_CONDITIONS.filter((condition) => viaProjectToken || !condition.viaProjectTokenOnly);
}

/** Why this device's check gets no heartbeat and no decision, or undefined when it goes on. */
export function heartbeatRefusal(device: Pick<Device, 'active' | 'tokenRequired'>, viaProjectToken: boolean): HeartbeatRefusal | undefined {
  return heartbeatConditions(viaProjectToken).find((condition) => device[condition.field] === condition.refusedWhen)?.refusal;
}
