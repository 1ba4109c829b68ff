
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

export interface WebhookStore {
  insertWebhook(webhook: Webhook): Promise<void>;
  listWebhooks(projectId: string): Promise<Webhook[]>;
  findWebhook(webhookId: string): Promise<Webhook | null>;
  /** Deletes the webhook and its deliveries; false when it does not exist. */
  deleteWebhook(projectId: string, webhookId: string): Promise<boolean>;
  /** Stores each delivery once: a delivery already stored (the same id) is left as it is. */
  insertDeliveries(deliveries: WebhookDelivery[]): Promise<void>;
  /**
   * Claims the delivery due first: moves its next attempt to `claimUntil`, so that no other worker
   * takes it meanwhile, and a worker that dies leaves it due again once the claim lapses.
   */
  claimDueDelivery(now: Date, claimUntil: Date): Promise<WebhookDelivery | null>;
  /** Logs an attempt and what follows it; a failure does not undo a success logged meanwhile. */
  finishAttempt(deliveryId: string, attempt: DeliveryAttempt, next: { state: DeliveryState; nextAttemptAt: Date | null }): Promise<void>;
  /** Newest first. */
  listDeliveries(webhookId: string, limit: number): Promise<WebhookDelivery[]>;
}

/** Sends one signed POST; resolves with the receiver's status, rejects when no response came. */
export interface WebhookSender {
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number>;
}
