import { HEALTH_SIDES, NO_HEALTH, type HealthComparison, type HealthSide, type HealthTally } from '../../domain/health-regression';
import type { HealthTallyStore } from '../../domain/ports';
import type { HealthTallyDoc, RolloutModels } from './models';
import { collectionOf } from '@ota/mongo';

/**
 * One document per deployment, side, period and registry replica. FerretDB v1 runs an `$inc` as
 * read-then-write, so two writers of one document would lose counts: each replica's flushes,
 * which it sends one at a time, are the only writer of its documents.
 */
export class MongoHealthTallies implements HealthTallyStore {
  constructor(private readonly models: Pick<RolloutModels, 'HealthTally'>) {}

  async add(tallies: readonly HealthTally[]): Promise<void> {
    await Promise.all(tallies.map((tally) => this.addOne(tally)));
  }

  private async addOne(tally: HealthTally): Promise<void> {
    const _id = `${tally.deploymentId}:${tally.side}:${tally.periodStart.getTime()}:${tally.source}`;
    const update = {
      $inc: { device_seconds: tally.deviceSeconds, abnormal_resets: tally.abnormalResets, devices: tally.devices },
      $setOnInsert: { project_id: tally.projectId, deployment_id: tally.deploymentId, side: tally.side, period_start: tally.periodStart, source: tally.source },
    };
    const upsert = () => collectionOf(this.models.HealthTally).updateOne({ _id }, update, { upsert: true });
    await upsert();
  }

  async periods(deploymentId: string): Promise<HealthTally[]> {
    const docs = await this.models.HealthTally.find({ deployment_id: deploymentId }).lean<HealthTallyDoc[]>();
    // The replicas' documents of one period and side, summed.
    const periods = new Map<string, HealthTally>();
    for (const doc of docs) {
      const key = `${doc.period_start.getTime()}:${doc.side}`;
      const period = periods.get(key) ?? { projectId: doc.project_id, deploymentId: doc.deployment_id, side: doc.side as HealthSide, periodStart: doc.period_start, source: '', ...NO_HEALTH };
      period.devices += doc.devices;
      period.deviceSeconds += doc.device_seconds;
      period.abnormalResets += doc.abnormal_resets;
      periods.set(key, period);
    }
    return [...periods.values()].sort((a, b) => a.periodStart.getTime() - b.periodStart.getTime() || a.side.localeCompare(b.side));
  }

  async sums(deploymentId: string, since?: Date): Promise<HealthComparison> {
    // Summed here rather than by $group: FerretDB v1 answers only the first of several $sum
    // accumulators in one $group (the rest come back 0), and a deployment has at most a few
    // thousand periods.
    const sums = Object.fromEntries(HEALTH_SIDES.map((side) => [side, { ...NO_HEALTH }])) as HealthComparison;
    for (const period of await this.periods(deploymentId)) {
      const side = sums[period.side];
      if (!side) continue;
      side.devices += period.devices;
      if (since && period.periodStart < since) continue;
      side.deviceSeconds += period.deviceSeconds;
      side.abnormalResets += period.abnormalResets;
    }
    return sums;
  }
}
