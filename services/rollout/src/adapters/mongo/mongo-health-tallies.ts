import { isDuplicateKey } from '@ota/mongo';
import { HEALTH_SIDES, NO_HEALTH, type HealthComparison, type HealthSide, type HealthTally } from '../../domain/health-regression';
import type { HealthTallyStore } from '../../domain/ports';
import type { HealthTallyDoc, RolloutModels } from './models';

/** One document per deployment, side and period, which every registry replica's flush adds to. */
export class MongoHealthTallies implements HealthTallyStore {
  constructor(private readonly models: Pick<RolloutModels, 'HealthTally'>) {}

  async add(tallies: readonly HealthTally[]): Promise<void> {
    await Promise.all(tallies.map((tally) => this.addOne(tally)));
  }

  private async addOne(tally: HealthTally): Promise<void> {
    const _id = `${tally.deploymentId}:${tally.side}:${tally.periodStart.getTime()}`;
    const update = {
      $inc: { device_seconds: tally.deviceSeconds, abnormal_resets: tally.abnormalResets, devices: tally.devices },
      $setOnInsert: { project_id: tally.projectId, deployment_id: tally.deploymentId, side: tally.side, period_start: tally.periodStart },
    };
    const upsert = () => this.models.HealthTally.collection.updateOne({ _id } as never, update as never, { upsert: true });
    try {
      await upsert();
    } catch (error) {
      // Two flushes inserting the same period at once: one insert wins, and the other adds to it.
      if (!isDuplicateKey(error)) throw error;
      await upsert();
    }
  }

  async periods(deploymentId: string): Promise<HealthTally[]> {
    const docs = await this.models.HealthTally.find({ deployment_id: deploymentId }).sort({ period_start: 1, side: 1 }).lean<HealthTallyDoc[]>();
    return docs.map((doc) => ({
      projectId: doc.project_id,
      deploymentId: doc.deployment_id,
      side: doc.side as HealthSide,
      periodStart: doc.period_start,
      devices: doc.devices,
      deviceSeconds: doc.device_seconds,
      abnormalResets: doc.abnormal_resets,
    }));
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
