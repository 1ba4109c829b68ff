export type AuditRecord = {
  id: string;
  projectId: string;
  action: string;
  actorType: string;
  actorId: string;
  tokenPrefix: string;
  /** The actor's role in the project when it acted, and how it signed in; empty for the system and older events. */
  actorRole: string;
  actorVia: string;
  targetType: string;
  targetId: string;
  createdAt: Date;
  details: Record<string, unknown>;
};


export interface Webhook {
  id: string;
  projectId: string;
  url: string;
  events: string[];
  /** Signs every delivery; shown once, when the webhook is created. */
  secret: string;
  createdAt: Date;
}

export interface DeliveryAttempt {
  at: Date;
  /** The receiver's HTTP status, or null when no response came (refused, timed out, …). */
  statusCode: number | null;
  /** Why the attempt failed; empty for a 2xx. */
  error: string;
  durationMs: number;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One event for one webhook: the same body is sent on every attempt, under the same id. */
export interface WebhookDelivery {
  id: string;
  webhookId: string;
  projectId: string;
  /** The event's most specific kind (see kindsOfAudit). */
  event: string;
  auditEventId: string;
  body: string;
  state: DeliveryState;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due; while an attempt runs, when its claim lapses. Null once done. */
  nextAttemptAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
}
