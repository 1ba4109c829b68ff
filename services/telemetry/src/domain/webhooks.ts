import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { failedPrecondition, invalidArgument, notFound } from '@ota/errors';
import { urlProblem } from './webhook-destination';
import { kindsOfAudit } from './webhook-events';
import type { AuditRecord, DeliveryAttempt, Webhook, WebhookDelivery } from './model';
import type { WebhookSender, WebhookStore } from './ports';
import { nextAttemptAt, type RetrySettings } from './webhook-retry';
import { webhookSignature } from './webhook-signature';

/** Webhooks a project may have at once. */
export const MAX_WEBHOOKS_PER_PROJECT = 20;
/** Deliveries the log returns at most. */
export const MAX_DELIVERIES_LISTED = 100;

export interface WebhookSettings extends RetrySettings {
  /** How long one attempt may wait for the receiver's answer. */
  timeoutMs: number;
  allowNonPublicDestinations: boolean;
}

/**
 * Project webhooks: every audit event of a subscribed kind becomes a stored delivery per webhook
 * (before the event is acknowledged on JetStream, so nothing is lost across a restart), which
 * `attemptDue` sends, signed, and retries with back-off until the receiver answers 2xx or the
 * retry window ends.
 */
export class Webhooks {
  // One claim at a time in this process: FerretDB v1 runs findAndModify as a read then a write, so
  // two concurrent claims could take the same delivery (on MongoDB it is atomic across replicas).
  private claiming: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: WebhookStore,
    private readonly sender: WebhookSender,
    private readonly settings: WebhookSettings,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(projectId: string, url: string, events: string[]): Promise<Webhook> {
    // The URL's form, then where its name resolves now; every delivery checks the address again.
    const problem = urlProblem(url, this.settings.allowNonPublicDestinations) ?? (await this.sender.destinationProblem(url));
    if (problem) throw invalidArgument(problem);
    // Which kinds may be chosen is the gateway's contract; this service matches them to audit events.
    if (events.length === 0) throw invalidArgument('events must name at least one event kind');
    if ((await this.store.listWebhooks(projectId)).length >= MAX_WEBHOOKS_PER_PROJECT) {
      throw failedPrecondition(`a project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks; delete one first`);
    }
    const webhook: Webhook = {
      id: randomUUID(),
      projectId,
      url,
      events: [...new Set(events)],
      secret: `whsec_${randomBytes(32).toString('base64url')}`,
      createdAt: this.now(),
    };
    await this.store.insertWebhook(webhook);
    return webhook;
  }

  list(projectId: string): Promise<Webhook[]> {
    return this.store.listWebhooks(projectId);
  }

  async delete(projectId: string, webhookId: string): Promise<void> {
    if (!(await this.store.deleteWebhook(projectId, webhookId))) throw notFound('webhook not found');
  }

  async deliveries(projectId: string, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    const webhook = await this.store.findWebhook(webhookId);
    if (!webhook || webhook.projectId !== projectId) throw notFound('webhook not found');
    return this.store.listDeliveries(webhookId, Math.min(Math.max(limit || 20, 1), MAX_DELIVERIES_LISTED));
  }

  /** Stores a delivery of the event for each webhook subscribed to one of its kinds; true if any. */
  async enqueue(event: AuditRecord): Promise<boolean> {
    const kinds = kindsOfAudit(event);
    const subscribed = (await this.store.listWebhooks(event.projectId)).filter((webhook) => webhook.events.some((kind) => kinds.includes(kind)));
    if (subscribed.length === 0) return false;
    const now = this.now();
    await this.store.insertDeliveries(
      subscribed.map((webhook) => {
        // Derived, so that an event delivered twice by JetStream makes one delivery.
        const id = createHash('sha256').update(`${event.id}/${webhook.id}`).digest('hex').slice(0, 32);
        return {
          id,
          webhookId: webhook.id,
          projectId: event.projectId,
          event: kinds[kinds.length - 1]!,
          auditEventId: event.id,
          body: JSON.stringify(payloadOf(id, kinds, event)),
          state: 'pending' as const,
          attempts: [],
          nextAttemptAt: now,
          createdAt: now,
          deliveredAt: null,
        };
      }),
    );
    return true;
  }

  /** Claims and attempts one due delivery; false when none is due. */
  /** Attempts one due delivery, if any; `claimed` is called as soon as one is claimed, before its attempt. */
  async attemptDue(claimed?: () => void): Promise<boolean> {
    const now = this.now();
    // The claim outlasts the attempt's timeout, so that only a worker that died loses it.
    const claim = this.claiming.then(() => this.store.claimDueDelivery(now, new Date(now.getTime() + this.settings.timeoutMs + CLAIM_SLACK_MS)));
    this.claiming = claim.catch(() => undefined);
    const delivery = await claim;
    if (!delivery) return false;
    claimed?.();
    const webhook = await this.store.findWebhook(delivery.webhookId);
    // Deleted meanwhile: its deliveries went with it.
    if (!webhook) return true;
    const attempt = await this.attempt(webhook, delivery);
    if (!attempt.error) {
      await this.store.finishAttempt(delivery.id, attempt, { state: 'delivered', nextAttemptAt: null });
      return true;
    }
    const failures = delivery.attempts.filter((earlier) => earlier.error).length + 1;
    const next = nextAttemptAt(delivery.createdAt, failures, this.now(), this.settings);
    await this.store.finishAttempt(delivery.id, attempt, { state: next ? 'pending' : 'failed', nextAttemptAt: next });
    return true;
  }

  /** When the next attempt of any replica's deliveries falls due, as far as the store knows now. */
  firstPendingAt(): Promise<Date | null> {
    return this.store.firstPendingAt();
  }

  private async attempt(webhook: Webhook, delivery: WebhookDelivery): Promise<DeliveryAttempt> {
    const at = this.now();
    const timestamp = Math.floor(at.getTime() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'ota-webhooks/1',
      'ota-delivery-id': delivery.id,
      'ota-event': delivery.event,
      'ota-timestamp': String(timestamp),
      'ota-signature': webhookSignature(webhook.secret, timestamp, delivery.body),
    };
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    try {
      const statusCode = await this.sender.post(webhook.url, headers, delivery.body, this.settings.timeoutMs);
      const error = statusCode >= 200 && statusCode < 300 ? '' : `the receiver answered ${statusCode}`;
      return { at, statusCode, error, durationMs: durationMs() };
    } catch (error) {
      return { at, statusCode: null, error: (error as Error).message || 'the request failed', durationMs: durationMs() };
    }
  }
}

// Time for the attempt's outcome to be written after its timeout, before another worker may retry.
const CLAIM_SLACK_MS = 5_000;

/** The JSON body of a delivery (docs/api.md, "Webhooks"). */
function payloadOf(deliveryId: string, kinds: string[], event: AuditRecord) {
  return {
    id: deliveryId,
    event: kinds[kinds.length - 1],
    kinds,
    project_id: event.projectId,
    created_at: event.createdAt.toISOString(),
    audit_event: {
      id: event.id,
      action: event.action,
      actor_type: event.actorType,
      actor_id: event.actorId,
      target_type: event.targetType,
      target_id: event.targetId,
      created_at: event.createdAt.toISOString(),
      details: event.details,
    },
  };
}
