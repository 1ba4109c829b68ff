import { EVENTS, type Bus } from '@ota/bus';
import { uuidV5In } from '@ota/ids';
import type { Logger } from '@ota/logging';
import type { events } from '@ota/proto';
import type { Deployment } from '../../domain/model';

// The namespace of automatic audit event ids is a fixed random UUID.
const inAuditNamespace = uuidV5In('3d0c8f5a-9b7e-4e21-a6f4-c2d9e8b17a50');
const ATTEMPTS = 10;
const FIRST_RETRY_MS = 1_000;
const LONGEST_RETRY_MS = 60_000;

/**
 * Audits what a deployment did by itself (a guardrail pause, a ramp by its plan) as the `system`
 * actor. The event id is derived from the deployment and the version the change claimed, so the
 * replicas and retries that publish it again are stored once (JetStream drops a repeated message
 * id; telemetry keys events by id). Publishing is retried with back-off for about six minutes; the
 * change itself is already stored on the deployment, where it stays visible either way.
 */
export class AutomaticAudit {
  constructor(
    private readonly bus: Bus,
    private readonly logger: Logger,
  ) {}

  record(deployment: Deployment, action: string, details: Record<string, unknown>): void {
    const event: events.AuditRecorded = {
      id: auditIdOf(deployment.id, deployment.version),
      projectId: deployment.projectId,
      action,
      actorType: 'system',
      actorId: 'rollout',
      tokenPrefix: '',
      actorRole: '',
      actorVia: '',
      targetType: 'deployment',
      targetId: deployment.id,
      createdAt: deployment.updatedAt,
      details,
    };
    void this.publish(event, 1);
  }

  private async publish(event: events.AuditRecorded, attempt: number): Promise<void> {
    try {
      await this.bus.publishDurable(EVENTS.auditRecorded, event, event.id);
    } catch (error) {
      if (attempt >= ATTEMPTS) {
        this.logger.error({ err: error, auditId: event.id, action: event.action }, 'an automatic audit event could not be published; the deployment still shows the change');
        return;
      }
      const delay = Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), LONGEST_RETRY_MS);
      this.logger.warn({ err: error, auditId: event.id, attempt, retryInMs: delay }, 'automatic audit event not published yet; retrying');
      setTimeout(() => void this.publish(event, attempt + 1), delay).unref();
    }
  }
}

/** The audit event id of the change that made `version`: a UUIDv5 of the deployment and version. */
export function auditIdOf(deploymentId: string, version: number): string {
  return inAuditNamespace(`${deploymentId}:${version}`);
}
