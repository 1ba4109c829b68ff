import { randomUUID } from 'node:crypto';
import { collectionOf, insertUnique } from '@ota/mongo';
import type { CountSnapshot, DeviceStateStore, StatusCountStore } from '../../domain/ports';
import { addCounts, NO_COUNTS, secondOf, type CountDelta, type StatusCounts } from '../../domain/status-counts';
import type { DeltaDoc, ReasonCounts, RolloutModels, SnapshotDoc } from './models';

export class MongoStatusCounts implements StatusCountStore {
  constructor(
    private readonly models: Pick<RolloutModels, 'Snapshot' | 'Delta'>,
    /** Where a recount reads the truth: the devices' counted steps, their statuses and their failures. */
    private readonly events: Pick<DeviceStateStore, 'claimMissingSteps' | 'countedByStatus' | 'devicesByStatus' | 'failuresByReason'>,
  ) {}

  async startCounts(deploymentId: string, at: Date): Promise<void> {
    await insertUnique(collectionOf(this.models.Snapshot), snapshotDoc(deploymentId, 1, secondOf(at), NO_COUNTS(), at));
  }

  async insertDelta(delta: CountDelta): Promise<void> {
    const doc: DeltaDoc = {
      _id: randomUUID(),
      deployment_id: delta.deploymentId,
      second: delta.second,
      by_status: Object.fromEntries(delta.byStatus),
      failures_by_reason: reasonList(delta.failuresByReason),
    };
    await collectionOf(this.models.Delta).insertOne(doc);
  }

  async readCounts(deploymentId: string): Promise<{ counts: StatusCounts; snapshot: CountSnapshot } | null> {
    const latest = await this.latest(deploymentId);
    if (!latest) return null;
    const deltas = await this.models.Delta.find({ deployment_id: deploymentId, second: { $gte: latest.through } }).lean<DeltaDoc[]>();
    const counts = countsOf(latest);
    for (const delta of deltas) addCounts(counts, countsOf(delta));
    return { counts, snapshot: snapshotOf(latest) };
  }

  async compact(deploymentId: string, cutoff: Date): Promise<CountSnapshot | null> {
    const latest = await this.latest(deploymentId);
    if (!latest) return null;
    const deltas = cutoff > latest.through ? await this.models.Delta.find({ deployment_id: deploymentId, second: { $gte: latest.through, $lt: cutoff } }).lean<DeltaDoc[]>() : [];
    if (deltas.length === 0) return snapshotOf(latest);
    const counts = countsOf(latest);
    for (const delta of deltas) addCounts(counts, countsOf(delta));
    const next = snapshotDoc(deploymentId, latest.version + 1, cutoff, counts, latest.recounted_at);
    if (!(await insertUnique(collectionOf(this.models.Snapshot), next))) return this.latest(deploymentId).then((doc) => doc && snapshotOf(doc));
    await this.forgetBefore(latest);
    return snapshotOf(next);
  }

  async recount(deploymentId: string, cutoff: Date, now: Date): Promise<boolean> {
    const latest = await this.latest(deploymentId);
    // Never behind the newest snapshot: the deltas before its `through` may be gone already.
    const through = latest && latest.through > cutoff ? latest.through : cutoff;
    // The reconcile. A device is counted at or below its highest status, so the steps' counts equal
    // the statuses' exactly when no device misses a step; only then is the per-device comparison
    // (a row per device) skipped. A missing step (a replica stopped between its two writes, or a
    // device that reported before steps were kept) is taken, and the steps counted again.
    let [byStatus, reached, failuresByReason] = await Promise.all([
      this.events.countedByStatus(deploymentId, through),
      this.events.devicesByStatus(deploymentId, { before: through }),
      this.events.failuresByReason(deploymentId, through),
    ]);
    if (!sameCounts(byStatus, reached) && (await this.events.claimMissingSteps(deploymentId)) > 0) byStatus = await this.events.countedByStatus(deploymentId, through);
    const inserted = await insertUnique(collectionOf(this.models.Snapshot), snapshotDoc(deploymentId, (latest?.version ?? 0) + 1, through, { byStatus, failuresByReason }, now));
    if (inserted && latest) await this.forgetBefore(latest);
    return inserted;
  }

  /**
   * Deletes what a reader of `previous` (the snapshot before the new one) no longer needs: older
   * snapshots, and the deltas before `previous.through`. A reader that read `previous` still finds
   * every delta it adds.
   */
  private async forgetBefore(previous: SnapshotDoc): Promise<void> {
    await Promise.all([
      this.models.Delta.deleteMany({ deployment_id: previous.deployment_id, second: { $lt: previous.through } }),
      this.models.Snapshot.deleteMany({ deployment_id: previous.deployment_id, version: { $lt: previous.version } }),
    ]);
  }

  private async latest(deploymentId: string): Promise<SnapshotDoc | null> {
    const [latest] = await this.models.Snapshot.find({ deployment_id: deploymentId }).sort({ version: -1 }).limit(1).lean<SnapshotDoc[]>();
    return latest ?? null;
  }
}

function sameCounts(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  return a.size === b.size && [...a].every(([status, count]) => b.get(status) === count);
}

function snapshotDoc(deploymentId: string, version: number, through: Date, counts: StatusCounts, recountedAt: Date): SnapshotDoc {
  return {
    _id: `${deploymentId}:${version}`,
    deployment_id: deploymentId,
    version,
    through,
    by_status: Object.fromEntries(counts.byStatus),
    failures_by_reason: reasonList(counts.failuresByReason),
    recounted_at: recountedAt,
  };
}

function snapshotOf(doc: SnapshotDoc): CountSnapshot {
  return { version: doc.version, through: doc.through, recountedAt: doc.recounted_at };
}

function countsOf(doc: Pick<SnapshotDoc, 'by_status' | 'failures_by_reason'>): StatusCounts {
  return {
    byStatus: new Map(Object.entries(doc.by_status ?? {})),
    failuresByReason: new Map((doc.failures_by_reason ?? []).map(({ reason, count }) => [reason, count])),
  };
}

function reasonList(byReason: ReadonlyMap<string, number>): ReasonCounts {
  return [...byReason].map(([reason, count]) => ({ reason, count }));
}
