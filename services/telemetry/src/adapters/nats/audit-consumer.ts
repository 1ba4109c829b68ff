import { DURABLES, EVENTS, TELEMETRY_STREAM, type Bus } from '@ota/bus';
import type { events } from '@ota/proto';

/**
 * Consumes the audit events the gateway and rollout store in JetStream, with telemetry's durable
 * consumer, once the stream exists (made here if it does not). An event is acknowledged only once
 * `handle` resolves: a crash before that gets it again.
 */
export async function consumeAuditEvents(bus: Bus, handle: (event: events.AuditRecorded) => Promise<void>): Promise<void> {
  await bus.ensureStreams();
  await bus.consumeDurable(TELEMETRY_STREAM.name, DURABLES.telemetryAudit, EVENTS.auditRecorded, handle);
}
