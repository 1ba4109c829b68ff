import { randomUUID } from 'node:crypto';
import { type Bus, EVENTS } from '@ota/bus';
import type { events } from '@ota/proto';
import type { Logger } from '@ota/logging';
import { collectionOf } from '@ota/mongo';
import type { ServiceMetrics } from '@ota/metrics';
import { auditActorOf, type Principal } from '../../auth/principal';
import type { AuditEntry, AuditLog } from '../../use-cases/ports';
import type { AuditOutboxDoc, GatewayModels } from '../mongo/models';

/**
 * Records the audit event of a mutation before the mutation is acknowledged. The event goes to
 * JetStream; when NATS is away or does not acknowledge in time, it goes to the gateway's
 * `audit_outbox` collection instead, and `AuditOutboxRelay` publishes it once NATS is back. Either
 * way the event is durable before the caller hears of success; if both fail, the caller gets an
 * error (503) rather than a success without an audit event.
 */
export class JetStreamAuditLog implements AuditLog {
  constructor(
    private readonly bus: Bus,
    private readonly models: GatewayModels,
    metrics: ServiceMetrics,
    private readonly logger: Logger,
  ) {
    this.outbox = auditOutboxMetrics(metrics);
  }

  private readonly outbox: ReturnType<typeof auditOutboxMetrics>;

  async record(principal: Principal, entry: AuditEntry): Promise<void> {
    const event: events.AuditRecorded = {
      id: randomUUID(),
      projectId: entry.projectId,
      action: entry.action,
      ...auditActorOf(principal),
      targetType: entry.targetType,
      targetId: entry.targetId,
      createdAt: entry.at ?? new Date(),
      details: entry.details ?? {},
    };
    if (this.bus.isConnected()) {
      try {
        await this.bus.publishDurable(EVENTS.auditRecorded, event, event.id);
        return;
      } catch (error) {
        this.logger.warn({ err: error, auditId: event.id }, 'JetStream did not store an audit event; keeping it in the outbox');
      }
    }
    const kept: AuditOutboxDoc = { _id: event.id, event: EVENTS.auditRecorded.message.toJSON(event), created_at: new Date() };
    await collectionOf(this.models.AuditOutbox).insertOne(kept);
    this.outbox.written.inc();
    this.logger.warn({ auditId: event.id, action: event.action }, 'audit event kept in the outbox until NATS stores it');
  }
}

/**
 * Moves audit events from the outbox to JetStream while NATS is connected, oldest first. Every
 * gateway replica runs one; two replicas relaying the same event is harmless, because JetStream
 * drops a repeated message id and telemetry stores events keyed by their id.
 */
export class AuditOutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly models: GatewayModels,
    metrics: ServiceMetrics,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly batchSize = 100,
  ) {
    this.outbox = auditOutboxMetrics(metrics);
  }

  private readonly outbox: ReturnType<typeof auditOutboxMetrics>;

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.relayOnce().then(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Publishes what the outbox holds, in batches; returns how many events it moved. */
  async relayOnce(): Promise<number> {
    let moved = 0;
    try {
      for (;;) {
        if (!this.bus.isConnected()) return moved;
        const docs = await this.models.AuditOutbox.find().sort({ created_at: 1, _id: 1 }).limit(this.batchSize).lean();
        for (const doc of docs) {
          await this.bus.publishDurable(EVENTS.auditRecorded, EVENTS.auditRecorded.message.fromJSON(doc.event), doc._id);
          await this.models.AuditOutbox.deleteOne({ _id: doc._id });
          this.outbox.relayed.inc();
          moved += 1;
        }
        if (docs.length < this.batchSize) return moved;
      }
    } catch (error) {
      this.logger.warn({ err: error, moved }, 'audit outbox relay stopped early; it tries again');
      return moved;
    }
  }
}

function auditOutboxMetrics(metrics: ServiceMetrics) {
  return {
    written: metrics.counter('ota_audit_outbox_written_total', 'Audit events kept in the outbox because JetStream could not store them at once.'),
    relayed: metrics.counter('ota_audit_outbox_relayed_total', 'Audit events moved from the outbox to JetStream.'),
  };
}
