import { insertUnique } from '@ota/mongo';
import type { AuditRecord } from '../../domain/model';
import type { TelemetryStore } from '../../domain/ports';
import type { AuditDoc, TelemetryModels } from './models';

export class MongoTelemetryStore implements TelemetryStore {
  constructor(private readonly models: TelemetryModels) {}

  async insertAudit(record: AuditRecord): Promise<void> {
    // JetStream delivers at least once: a duplicate of a stored event is success, not an error.
    await insertUnique(this.models.Audit.collection, {
      _id: record.id,
      project_id: record.projectId,
      action: record.action,
      actor_type: record.actorType,
      actor_id: record.actorId,
      token_prefix: record.tokenPrefix,
      actor_role: record.actorRole,
      actor_via: record.actorVia,
      target_type: record.targetType,
      target_id: record.targetId,
      created_at: record.createdAt,
      details: record.details,
    });
  }

  async listAudit(projectId: string, limit: number, beforeId?: string, action?: string): Promise<AuditRecord[] | null> {
    const filter: Record<string, unknown> = { project_id: projectId };
    // A resource alone (`deployment`) stands for all of its actions; the gateway lets only [a-z_.] through.
    if (action) filter.action = action.includes('.') ? action : { $regex: `^${action}\\.` };
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
      actorRole: doc.actor_role ?? '',
      actorVia: doc.actor_via ?? '',
      targetType: doc.target_type,
      targetId: doc.target_id,
      createdAt: doc.created_at,
      details: doc.details ?? {},
    }));
  }
}
