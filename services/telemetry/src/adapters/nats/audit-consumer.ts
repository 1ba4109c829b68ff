import { DURABLES, SUBJECTS, TELEMETRY_STREAM, type AuditRecordedEvent, type Bus } from '@ota/bus';

/**
 * Consumes the audit events the gateway and rollout store in JetStream, with telemetry's durable
 * consumer, once the stream exists (made here if it does not). An event is acknowledged only once
 * `handle` resolves: a crash before that gets it again.
 */
export async function consumeAuditEvents(bus: Bus, handle: (event: AuditRecordedEvent) => Promise<void>): Promise<void> {
  await bus.ensureStreams();
  await bus.consumeDurable<AuditRecordedEvent>(TELEMETRY_STREAM.name, DURABLES.telemetryAudit, SUBJECTS.auditRecorded, handle);
}
