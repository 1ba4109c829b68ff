import { isDuplicateKey } from '@ota/mongo';
import { Schema, type Connection } from 'mongoose';
import type { AuditRecord, DecisionQuery, DecisionRecord, TelemetryStore } from '../../domain/model';

interface DecisionDoc {
  _id: string;
  project_id: string;
  device_id: string;
  device_uuid: string;
  created_at: Date;
  decision: string;
  status: string;
  deployment_id: string;
  artifact_build_number: number | null;
  reported_build_number: number | null;
  reported_version: string;
  message: string;
}

interface AuditDoc {
  _id: string;
  project_id: string;
  action: string;
  actor_type: string;
  actor_id: string;
  token_prefix: string;
  target_type: string;
  target_id: string;
  created_at: Date;
  details: Record<string, unknown>;
}

const options = { versionKey: false as const, strict: false as const };

export function registerTelemetryModels(connection: Connection) {
  const decisionSchema = new Schema<DecisionDoc>({ _id: String }, options);
  // Newest first with the id as tie-breaker: the order the API promises is deterministic.
  decisionSchema.index({ project_id: 1, device_uuid: 1, created_at: -1, _id: -1 });
  const auditSchema = new Schema<AuditDoc>({ _id: String }, options);
  auditSchema.index({ project_id: 1, created_at: -1, _id: -1 });
  return {
    Decision: connection.model<DecisionDoc>('Decision', decisionSchema, 'decisions'),
    Audit: connection.model<AuditDoc>('Audit', auditSchema, 'audit_events'),
  };
}

type TelemetryModels = ReturnType<typeof registerTelemetryModels>;

export class MongoTelemetryStore implements TelemetryStore {
  constructor(private readonly models: TelemetryModels) {}

  async insertDecision(record: DecisionRecord): Promise<void> {
    await insertOnce(() =>
      this.models.Decision.collection.insertOne({
        _id: record.id,
        project_id: record.projectId,
        device_id: record.deviceId,
        device_uuid: record.deviceUuid,
        created_at: record.createdAt,
        decision: record.decision,
        status: record.status,
        deployment_id: record.deploymentId,
        artifact_build_number: record.artifactBuildNumber,
        reported_build_number: record.reportedBuildNumber,
        reported_version: record.reportedVersion,
        message: record.message,
      } as never),
    );
  }

  async trimDecisions(projectId: string, deviceUuid: string, keep: number): Promise<void> {
    // No $push/$slice (FerretDB ignores $slice): find what lies past the newest `keep` and delete it.
    const surplus = await this.models.Decision.find({ project_id: projectId, device_uuid: deviceUuid }, { _id: 1 })
      .sort({ created_at: -1, _id: -1 })
      .skip(keep)
      .lean<Array<{ _id: string }>>();
    if (surplus.length > 0) await this.models.Decision.deleteMany({ _id: { $in: surplus.map((doc) => doc._id) } });
  }

  async listDecisions(query: DecisionQuery): Promise<DecisionRecord[]> {
    const filter: Record<string, unknown> = { project_id: query.projectId, device_uuid: query.deviceUuid };
    if (query.since) filter.created_at = { $gte: query.since };
    if (query.decision) filter.decision = query.decision;
    if (query.status) filter.status = query.status;
    const docs = await this.models.Decision.find(filter).sort({ created_at: -1, _id: -1 }).limit(query.limit).lean<DecisionDoc[]>();
    return docs.map((doc) => ({
      id: doc._id,
      projectId: doc.project_id,
      deviceId: doc.device_id,
      deviceUuid: doc.device_uuid,
      createdAt: doc.created_at,
      decision: doc.decision,
      status: doc.status,
      deploymentId: doc.deployment_id,
      artifactBuildNumber: doc.artifact_build_number,
      reportedBuildNumber: doc.reported_build_number,
      reportedVersion: doc.reported_version,
      message: doc.message,
    }));
  }

  async deleteDecisions(projectId: string, deviceUuid: string): Promise<void> {
    await this.models.Decision.deleteMany({ project_id: projectId, device_uuid: deviceUuid });
  }

  async insertAudit(record: AuditRecord): Promise<void> {
    await insertOnce(() =>
      this.models.Audit.collection.insertOne({
        _id: record.id,
        project_id: record.projectId,
        action: record.action,
        actor_type: record.actorType,
        actor_id: record.actorId,
        token_prefix: record.tokenPrefix,
        target_type: record.targetType,
        target_id: record.targetId,
        created_at: record.createdAt,
        details: record.details,
      } as never),
    );
  }

  async listAudit(projectId: string): Promise<AuditRecord[]> {
    const docs = await this.models.Audit.find({ project_id: projectId }).sort({ created_at: -1, _id: -1 }).lean<AuditDoc[]>();
    return docs.map((doc) => ({
      id: doc._id,
      projectId: doc.project_id,
      action: doc.action,
      actorType: doc.actor_type,
      actorId: doc.actor_id,
      tokenPrefix: doc.token_prefix,
      targetType: doc.target_type,
      targetId: doc.target_id,
      createdAt: doc.created_at,
      details: doc.details ?? {},
    }));
  }
}

/** JetStream delivers at least once: a duplicate of a stored event is success, not an error. */
async function insertOnce(insert: () => Promise<unknown>): Promise<void> {
  try {
    await insert();
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
  }
}
