import { Schema, type Connection } from 'mongoose';
import type { DeliveryState } from '../../domain/model';

// Telemetry's documents: audit events, webhooks and their deliveries.

export interface AuditDoc {
  _id: string;
  project_id: string;
  action: string;
  actor_type: string;
  actor_id: string;
  token_prefix: string;
  /** Absent from events stored before roles. */
  actor_role?: string;
  actor_via?: string;
  target_type: string;
  target_id: string;
  created_at: Date;
  details: Record<string, unknown>;
}

const options = { versionKey: false as const, strict: false as const };

export interface WebhookDoc {
  _id: string;
  project_id: string;
  url: string;
  events: string[];
  secret: string;
  created_at: Date;
}

export interface AttemptDoc {
  at: Date;
  status_code: number | null;
  error: string;
  duration_ms: number;
}

export interface DeliveryDoc {
  _id: string;
  webhook_id: string;
  project_id: string;
  event: string;
  audit_event_id: string;
  body: string;
  state: DeliveryState;
  attempts: AttemptDoc[];
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}

/**
 * A claim on one due time of a delivery: `_id` is `<delivery>#<due time in ms>#<take>`, whose
 * uniqueness gives that due time to one dispatcher (mongo-webhook-store.ts, claimDueDelivery).
 */
export interface DeliveryClaimDoc {
  _id: string;
  delivery_id: string;
  webhook_id: string;
  /** When the claim lapses, if its holder never finished the attempt. */
  until: Date;
}

export function registerTelemetryModels(connection: Connection) {
  const auditSchema = new Schema<AuditDoc>({ _id: String }, options);
  auditSchema.index({ project_id: 1, created_at: -1, _id: -1 });

  const webhookSchema = new Schema<WebhookDoc>({ _id: String }, options);
  webhookSchema.index({ project_id: 1 });
  const deliverySchema = new Schema<DeliveryDoc>({ _id: String }, options);
  deliverySchema.index({ state: 1, next_attempt_at: 1 });
  deliverySchema.index({ webhook_id: 1, created_at: -1 });
  const claimSchema = new Schema<DeliveryClaimDoc>({ _id: String }, options);
  claimSchema.index({ delivery_id: 1 });
  claimSchema.index({ webhook_id: 1 });
  return {
    Audit: connection.model<AuditDoc>('Audit', auditSchema, 'audit_events'),
    Webhook: connection.model<WebhookDoc>('Webhook', webhookSchema, 'webhooks'),
    Delivery: connection.model<DeliveryDoc>('WebhookDelivery', deliverySchema, 'webhook_deliveries'),
    DeliveryClaim: connection.model<DeliveryClaimDoc>('WebhookDeliveryClaim', claimSchema, 'webhook_delivery_claims'),
  };
}

export type TelemetryModels = ReturnType<typeof registerTelemetryModels>;
