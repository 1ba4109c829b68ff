import { notFound } from '@ota/errors';
import type { events } from '@ota/proto';
import type { AuditRecord } from './model';
import type { TelemetryStore } from './ports';

/** The audit trail: events arrive over JetStream (written once each) and are read back in pages. */
export class Telemetry {
  constructor(private readonly store: TelemetryStore) {}

  /** Stores the event once (a redelivered one is already there) and returns it as stored. */
  async recordAudit(event: events.AuditRecorded): Promise<AuditRecord> {
    // Every publisher sets both; the message type cannot say so.
    const record: AuditRecord = { ...event, createdAt: event.createdAt ?? new Date(), details: event.details ?? {} };
    await this.store.insertAudit(record);
    return record;
  }

  /** `action` is one action (`deployment.cancelled`) or a resource (`deployment`) for all of its actions. */
  async listAudit(projectId: string, limit: number, beforeId: string, action = ''): Promise<AuditRecord[]> {
    const records = await this.store.listAudit(projectId, limit, beforeId || undefined, action || undefined);
    if (!records) throw notFound(`no audit event ${beforeId} in this project`);
    return records;
  }
}
