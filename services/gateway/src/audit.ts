import { randomUUID } from 'node:crypto';
import { Bus, SUBJECTS, type AuditRecordedEvent } from '@ota/bus';
import type { Principal } from './auth/principal';

export interface AuditEntry {
  projectId: string;
  action: string;
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
}

/**
 * Publishes an audit event to JetStream and waits for the server to store it, so that a mutation
 * is acknowledged to the caller only once its audit event is durable.
 */
export class AuditLog {
  constructor(private readonly bus: Bus) {}

  async record(principal: Principal, entry: AuditEntry): Promise<void> {
    const event: AuditRecordedEvent = {
      id: randomUUID(),
      project_id: entry.projectId,
      action: entry.action,
      actor_type: principal.token.kind === 'personal' ? 'user' : 'project_token',
      actor_id: principal.token.kind === 'personal' ? principal.userId : principal.token.id,
      token_prefix: principal.token.prefix,
      target_type: entry.targetType,
      target_id: entry.targetId,
      created_at: new Date().toISOString(),
      details: entry.details ?? {},
    };
    await this.bus.publishDurable(SUBJECTS.auditRecorded, event, event.id);
  }
}
