import { notFound } from '@ota/errors';
import type { AuditRecordedEvent } from '@ota/bus';
import type { AuditRecord, TelemetryStore } from './model';

/** The audit trail: events arrive over JetStream (written once each) and are read back in pages. */
export class Telemetry {
  constructor(private readonly store: TelemetryStore) {}

  /** Stores the event once (a redelivered one is already there) and returns it as stored. */
  async recordAudit(event: AuditRecordedEvent): Promise<AuditRecord> {
    const record: AuditRecord = {
      id: event.id,
      projectId: event.project_id,
      action: event.action,
      actorType: event.actor_type,
      actorId: event.actor_id,
      tokenPrefix: event.token_prefix,
      targetType: event.target_type,
      targetId: event.target_id,
      createdAt: new Date(event.created_at),
      details: event.details,
    };
    await this.store.insertAudit(record);
    return record;
  }

  async listAudit(projectId: string, limit: number, beforeId: string): Promise<AuditRecord[]> {
    const records = await this.store.listAudit(projectId, limit, beforeId || undefined);
    if (!records) throw notFound(`no audit event ${beforeId} in this project`);
    return records;
  }
}
