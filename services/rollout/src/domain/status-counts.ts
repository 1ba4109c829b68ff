import { rankOf } from './device-status';

/**
 * One step of the status a device is counted under in a deployment: from `from` to the higher
 * `to`. Each status is left at most once, so the steps of a device form one rising chain.
 */
export interface CountedStep {
  deploymentId: string;
  projectId: string;
  deviceUuid: string;
  from: string;
  to: string;
  at: Date;
}

/** A deployment's devices per current status, and its failures per reason. */
export interface StatusCounts {
  byStatus: Map<string, number>;
  failuresByReason: Map<string, number>;
}

/** Changes to a deployment's counts from the events of one second (`second`, whole seconds). */
export interface CountDelta extends StatusCounts {
  deploymentId: string;
  second: Date;
}

export const NO_COUNTS = (): StatusCounts => ({ byStatus: new Map(), failuresByReason: new Map() });

/** Adds `delta` into `into`, key by key, dropping keys that come to 0. */
export function addCounts(into: StatusCounts, delta: StatusCounts): StatusCounts {
  addTo(into.byStatus, delta.byStatus);
  addTo(into.failuresByReason, delta.failuresByReason);
  return into;
}

function addTo(into: Map<string, number>, delta: ReadonlyMap<string, number>): void {
  for (const [key, count] of delta) {
    const sum = (into.get(key) ?? 0) + count;
    if (sum === 0) into.delete(key);
    else into.set(key, sum);
  }
}

/** The whole second `at` falls in: deltas are kept per second so that a recount can cut between them exactly. */
export function secondOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 1000) * 1000);
}

/**
 * What one stored event changes in the counts. `step` is the move of the device's counted status
 * that this event took (null when it took none: a repeat, a status below the counted one, or a
 * race another report won); a device is counted once, under the end of its steps. `newlyStored`
 * says whether the event was stored (a repeated status is not). Every `failed` report is a
 * failure; `rolled_back` is one the first time.
 */
export function countChange(event: { status: string; reason: string; newlyStored: boolean }, step: Pick<CountedStep, 'from' | 'to'> | null): StatusCounts {
  const change = NO_COUNTS();
  if (event.status === 'failed' || (event.status === 'rolled_back' && event.newlyStored)) change.failuresByReason.set(event.reason, 1);
  if (step) {
    change.byStatus.set(step.to, 1);
    if (rankOf(step.from) > rankOf('pending')) change.byStatus.set(step.from, -1);
  }
  return change;
}

/**
 * The count changes this replica made and has not yet written to the store, per deployment and
 * second. They are written as one insert per (deployment, second) every flush, never as updates:
 * FerretDB applies concurrent updates of one document as read-modify-write and loses most of them.
 */
export class PendingCountDeltas {
  private pending = new Map<string, CountDelta>();

  add(deploymentId: string, at: Date, change: StatusCounts): void {
    if (change.byStatus.size === 0 && change.failuresByReason.size === 0) return;
    const second = secondOf(at);
    const key = `${deploymentId}:${second.getTime()}`;
    let delta = this.pending.get(key);
    if (!delta) this.pending.set(key, (delta = { deploymentId, second, ...NO_COUNTS() }));
    addCounts(delta, change);
  }

  /** Everything pending, which is forgotten here: the caller writes it. */
  take(): CountDelta[] {
    const taken = [...this.pending.values()];
    this.pending = new Map();
    return taken;
  }

  /** Puts back deltas whose write failed, to go with the next flush. */
  restore(deltas: readonly CountDelta[]): void {
    for (const delta of deltas) this.add(delta.deploymentId, delta.second, delta);
  }

  get size(): number {
    return this.pending.size;
  }
}
