import type { AuditRecord, DeliveryAttempt, DeliveryState, Webhook, WebhookDelivery } from './model';

/** The audit trail's storage port; `adapters/mongo` implements it. */
export interface TelemetryStore {
  insertAudit(record: AuditRecord): Promise<void>;
  /** Newest first, at most `limit`, older than the event `beforeId` when given; null if `beforeId` names no event of the project. */
  listAudit(projectId: string, limit: number, beforeId?: string, action?: string): Promise<AuditRecord[] | null>;
}

/** The webhooks' storage port; `adapters/mongo` implements it. */
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
  /** When the pending delivery first in line is due (a held claim's end for one under way); null with none pending. */
  firstPendingAt(): Promise<Date | null>;
  /** Logs an attempt and what follows it; a failure does not undo a success logged meanwhile. */
  finishAttempt(deliveryId: string, attempt: DeliveryAttempt, next: { state: DeliveryState; nextAttemptAt: Date | null }): Promise<void>;
  /** Newest first. */
  listDeliveries(webhookId: string, limit: number): Promise<WebhookDelivery[]>;
}

/** Sends one signed POST; resolves with the receiver's status, rejects when no response came. */
export interface WebhookSender {
  /** Rejects with an error whose message a tenant may read: it names no resolved address. */
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number>;
  /** Why the URL's name may not be a destination (it resolves to a non-public address), or null. */
  destinationProblem(url: string): Promise<string | null>;
}
