import { isDuplicateKey } from '@ota/mongo';
import { Schema, type Connection } from 'mongoose';
import type { Deployment, DeploymentState } from '../../domain/model';
import type { DeploymentStore, DeviceStateRecord, DeviceStateStore } from '../../domain/ports';

interface DeploymentDoc {
  _id: string;
  project_id: string;
  artifact_id: string;
  build_number: number;
  version_label: string;
  state: DeploymentState;
  target_group_ids: string[];
  target_channel_ids: string[];
  rollout_percentage: number;
  rollout_strategy: string;
  notes: string;
  failure_count: number;
  created_at: Date;
  started_at: Date | null;
  updated_at: Date;
}

interface DeviceStateDoc {
  /** `${deployment_id}:${device_id}`: one record per device and deployment, enforced by the key. */
  _id: string;
  deployment_id: string;
  project_id: string;
  device_id: string;
  status: string;
  rank: number;
  reason: string;
  updated_at: Date;
}

const options = { versionKey: false as const, strict: 'throw' as const };

export function registerRolloutModels(connection: Connection) {
  const deploymentSchema = new Schema<DeploymentDoc>(
    {
      _id: String,
      project_id: { type: String, required: true },
      artifact_id: { type: String, required: true },
      build_number: Number,
      version_label: String,
      state: String,
      target_group_ids: [String],
      target_channel_ids: [String],
      rollout_percentage: Number,
      rollout_strategy: String,
      notes: String,
      failure_count: Number,
      created_at: Date,
      started_at: { type: Date, default: null },
      updated_at: Date,
    },
    options,
  );
  deploymentSchema.index({ project_id: 1, created_at: -1 });
  deploymentSchema.index({ state: 1 });

  const deviceStateSchema = new Schema<DeviceStateDoc>(
    {
      _id: String,
      deployment_id: String,
      project_id: String,
      device_id: String,
      status: String,
      rank: Number,
      reason: String,
      updated_at: Date,
    },
    options,
  );
  deviceStateSchema.index({ deployment_id: 1, updated_at: -1 });
  deviceStateSchema.index({ device_id: 1 });

  return {
    Deployment: connection.model<DeploymentDoc>('Deployment', deploymentSchema, 'deployments'),
    DeviceState: connection.model<DeviceStateDoc>('DeviceState', deviceStateSchema, 'device_states'),
  };
}

type RolloutModels = ReturnType<typeof registerRolloutModels>;

export class MongoRolloutStore implements DeploymentStore, DeviceStateStore {
  constructor(private readonly models: RolloutModels) {}

  async insertDeployment(deployment: Deployment): Promise<void> {
    await this.models.Deployment.collection.insertOne(docOf(deployment) as never);
  }

  async findDeployment(id: string): Promise<Deployment | null> {
    const doc = await this.models.Deployment.findById(id).lean<DeploymentDoc>();
    return doc ? deploymentOf(doc) : null;
  }

  async listDeployments(projectId: string): Promise<Deployment[]> {
    const docs = await this.models.Deployment.find({ project_id: projectId }).sort({ created_at: -1, _id: 1 }).lean<DeploymentDoc[]>();
    return docs.map(deploymentOf);
  }

  async listActiveDeployments(): Promise<Deployment[]> {
    const docs = await this.models.Deployment.find({ state: 'active' }).lean<DeploymentDoc[]>();
    return docs.map(deploymentOf);
  }

  async updateDeployment(id: string, expectedState: DeploymentState, set: Partial<Deployment>): Promise<Deployment | null> {
    const fields: Partial<DeploymentDoc> = {};
    if (set.state !== undefined) fields.state = set.state;
    if (set.rolloutPercentage !== undefined) fields.rollout_percentage = set.rolloutPercentage;
    if (set.startedAt !== undefined) fields.started_at = set.startedAt;
    if (set.updatedAt !== undefined) fields.updated_at = set.updatedAt;
    const doc = await this.models.Deployment.collection.findOneAndUpdate(
      { _id: id, state: expectedState } as never,
      { $set: fields },
      { returnDocument: 'after' },
    );
    return doc ? deploymentOf(doc as unknown as DeploymentDoc) : null;
  }

  async incrementFailureCount(id: string, at: Date): Promise<void> {
    await this.models.Deployment.collection.updateOne({ _id: id } as never, { $inc: { failure_count: 1 }, $set: { updated_at: at } });
  }

  countDeployments(projectId: string, states: readonly DeploymentState[], artifactId?: string): Promise<number> {
    const filter: Record<string, unknown> = { project_id: projectId, state: { $in: [...states] } };
    if (artifactId) filter.artifact_id = artifactId;
    return this.models.Deployment.countDocuments(filter).exec();
  }

  async listStates(deploymentId: string): Promise<DeviceStateRecord[]> {
    const docs = await this.models.DeviceState.find({ deployment_id: deploymentId }).sort({ updated_at: -1, _id: 1 }).lean<DeviceStateDoc[]>();
    return docs.map((doc) => ({ deviceId: doc.device_id, status: doc.status, reason: doc.reason ?? '', updatedAt: doc.updated_at }));
  }

  async deleteDeviceStates(projectId: string, deviceId: string): Promise<void> {
    await this.models.DeviceState.deleteMany({ project_id: projectId, device_id: deviceId });
  }

  async advance(input: {
    deploymentId: string;
    projectId: string;
    deviceId: string;
    status: string;
    rank: number;
    reason: string;
    at: Date;
  }): Promise<{ advanced: boolean; status: string }> {
    const _id = `${input.deploymentId}:${input.deviceId}`;
    try {
      // When a record exists at this rank or above, the filter matches nothing and the upsert's
      // insert collides on _id: the event is late or repeated, and nothing changes.
      await this.models.DeviceState.collection.updateOne(
        { _id, rank: { $lt: input.rank } } as never,
        {
          $set: {
            deployment_id: input.deploymentId,
            project_id: input.projectId,
            device_id: input.deviceId,
            status: input.status,
            rank: input.rank,
            reason: input.reason,
            updated_at: input.at,
          },
        },
        { upsert: true },
      );
      return { advanced: true, status: input.status };
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const current = await this.models.DeviceState.findById(_id).lean<DeviceStateDoc>();
      return { advanced: false, status: current?.status ?? input.status };
    }
  }

  async rolledBack(deviceId: string, deploymentIds: readonly string[]): Promise<Set<string>> {
    if (deploymentIds.length === 0) return new Set();
    const docs = await this.models.DeviceState.find(
      { _id: { $in: deploymentIds.map((id) => `${id}:${deviceId}`) }, status: 'rolled_back' },
      { deployment_id: 1 },
    ).lean<Array<Pick<DeviceStateDoc, 'deployment_id'>>>();
    return new Set(docs.map((doc) => doc.deployment_id));
  }
}

function docOf(deployment: Deployment): DeploymentDoc {
  return {
    _id: deployment.id,
    project_id: deployment.projectId,
    artifact_id: deployment.artifactId,
    build_number: deployment.buildNumber,
    version_label: deployment.versionLabel,
    state: deployment.state,
    target_group_ids: deployment.targetGroupIds,
    target_channel_ids: deployment.targetChannelIds,
    rollout_percentage: deployment.rolloutPercentage,
    rollout_strategy: deployment.rolloutStrategy,
    notes: deployment.notes,
    failure_count: deployment.failureCount,
    created_at: deployment.createdAt,
    started_at: deployment.startedAt,
    updated_at: deployment.updatedAt,
  };
}

function deploymentOf(doc: DeploymentDoc): Deployment {
  return {
    id: doc._id,
    projectId: doc.project_id,
    artifactId: doc.artifact_id,
    buildNumber: doc.build_number,
    versionLabel: doc.version_label,
    state: doc.state,
    targetGroupIds: doc.target_group_ids ?? [],
    targetChannelIds: doc.target_channel_ids ?? [],
    rolloutPercentage: doc.rollout_percentage,
    rolloutStrategy: doc.rollout_strategy,
    notes: doc.notes ?? '',
    failureCount: doc.failure_count ?? 0,
    createdAt: doc.created_at,
    startedAt: doc.started_at ?? null,
    updatedAt: doc.updated_at,
  };
}
