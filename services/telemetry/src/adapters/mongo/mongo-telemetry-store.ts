import { isDuplicateKey } from '@ota/mongo';
import { Schema, type Connection } from 'mongoose';
import type { AuditRecord, DecisionRecord, TelemetryStore } from '../../domain/model';

interface DecisionDoc {
  id: string;
  device_id: string;
  created_at: Date;
  decision: string;
  status: string;
  deployment_id: string;
  artifact_build_number: number | null;
  reported_build_number: number | null;
  reported_version: string;
  message: string;
}

/**
 * The newest decisions of one device, in one document keyed by the device's UUID: adding one is a
 * primary-key read and write, and the trim to 20 happens here rather than with $push/$slice
 * (which FerretDB ignores).
 */
interface DecisionHistoryDoc {
  _id: string;
  project_id: string;
  decisions: DecisionDoc[];
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
  const historySchema = new Schema<DecisionHistoryDoc>({ _id: String }, options);
  const auditSchema = new Schema<AuditDoc>({ _id: String }, options);
  auditSchema.index({ project_id: 1, created_at: -1, _id: -1 });
  return {
    DecisionHistory: connection.model<DecisionHistoryDoc>('DecisionHistory', historySchema, 'decision_histories'),
    Audit: connection.model<AuditDoc>('Audit', auditSchema, 'audit_events'),
  };
}

type TelemetryModels = ReturnType<typeof registerTelemetryModels>;

export class MongoTelemetryStore implements TelemetryStore {
  constructor(private readonly models: TelemetryModels) {}

  async addDecision(record: DecisionRecord, keep: number): Promise<void> {
    // Telemetry handles one event at a time per replica; a rare race between replicas over one
    // device can lose a record, which the spec allows (recording is best effort).
    const history = await this.models.DecisionHistory.findById(record.deviceUuid).lean<DecisionHistoryDoc>();
    const decisions = history?.decisions ?? [];
    if (decisions.some((decision) => decision.id === record.id)) return;
    const updated = [...decisions, decisionDocOf(record)].sort(newestFirst).slice(0, keep);
    await this.models.DecisionHistory.collection.replaceOne(
      { _id: record.deviceUuid } as never,
      { project_id: record.projectId, decisions: updated } as never,
      { upsert: true },
    );
  }

  async deviceDecisions(projectId: string, deviceUuid: string): Promise<DecisionRecord[]> {
    const history = await this.models.DecisionHistory.findById(deviceUuid).lean<DecisionHistoryDoc>();
    if (!history || history.project_id !== projectId) return [];
    return [...history.decisions].sort(newestFirst).map((doc) => ({
      id: doc.id,
      projectId: history.project_id,
      deviceId: doc.device_id,
      deviceUuid,
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
    await this.models.DecisionHistory.deleteOne({ _id: deviceUuid, project_id: projectId });
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

  async listAudit(projectId: string, limit: number, beforeId?: string): Promise<AuditRecord[] | null> {
    const filter: Record<string, unknown> = { project_id: projectId };
    if (beforeId) {
      const before = await this.models.Audit.findById(beforeId).lean<AuditDoc>();
      if (!before || before.project_id !== projectId) return null;
      // The order is (created_at, _id) descending: older, or as old with a smaller id.
      filter.$or = [{ created_at: { $lt: before.created_at } }, { created_at: before.created_at, _id: { $lt: before._id } }];
    }
    const docs = await this.models.Audit.find(filter).sort({ created_at: -1, _id: -1 }).limit(limit).lean<AuditDoc[]>();
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

function decisionDocOf(record: DecisionRecord): DecisionDoc {
  return {
    id: record.id,
    device_id: record.deviceId,
    created_at: record.createdAt,
    decision: record.decision,
    status: record.status,
    deployment_id: record.deploymentId,
    artifact_build_number: record.artifactBuildNumber,
    reported_build_number: record.reportedBuildNumber,
    reported_version: record.reportedVersion,
    message: record.message,
  };
}

/** Newest first, the id breaking ties, so that the order is the same on every read. */
function newestFirst(a: { created_at: Date; id: string }, b: { created_at: Date; id: string }): number {
  return b.created_at.getTime() - a.created_at.getTime() || b.id.localeCompare(a.id);
}
