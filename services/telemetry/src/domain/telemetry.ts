import { notFound } from '@ota/errors';
import type { AuditRecordedEvent, DecisionRecordedEvent } from '@ota/bus';
import { DECISIONS_KEPT_PER_DEVICE, type AuditRecord, type DecisionQuery, type DecisionRecord, type TelemetryStore } from './model';

export class Telemetry {
  constructor(private readonly store: TelemetryStore) {}

  async recordDecision(event: DecisionRecordedEvent): Promise<void> {
    // A device that was never registered (over_limit) has no history to keep.
    if (!event.device_uuid) return;
    await this.store.addDecision({
      id: event.id,
      projectId: event.project_id,
      deviceId: event.device_id,
      deviceUuid: event.device_uuid,
      createdAt: new Date(event.created_at),
      decision: event.decision,
      status: event.status,
      deploymentId: event.deployment_id,
      artifactBuildNumber: event.artifact_build_number,
      reportedBuildNumber: event.reported_build_number,
      reportedVersion: event.reported_version,
      message: event.message,
    }, DECISIONS_KEPT_PER_DEVICE);
  }

  /** Spec 4.2: newest first, filtered, at most `limit` (default and cap 20). */
  async listDecisions(query: DecisionQuery): Promise<DecisionRecord[]> {
    const limit = Math.min(Math.max(query.limit || DECISIONS_KEPT_PER_DEVICE, 1), DECISIONS_KEPT_PER_DEVICE);
    const records = await this.store.deviceDecisions(query.projectId, query.deviceUuid);
    return records
      .filter((record) => (!query.since || record.createdAt >= query.since) && (!query.decision || record.decision === query.decision) && (!query.status || record.status === query.status))
      .slice(0, limit);
  }

  deleteDecisions(projectId: string, deviceUuid: string): Promise<void> {
    return this.store.deleteDecisions(projectId, deviceUuid);
  }

  async recordAudit(event: AuditRecordedEvent): Promise<void> {
    await this.store.insertAudit({
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
    });
  }

  async listAudit(projectId: string, limit: number, beforeId: string): Promise<AuditRecord[]> {
    const records = await this.store.listAudit(projectId, limit, beforeId || undefined);
    if (!records) throw notFound(`no audit event ${beforeId} in this project`);
    return records;
  }
}
