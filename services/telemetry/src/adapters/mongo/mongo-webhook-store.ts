import { collectionOf, insertUnique } from '@ota/mongo';
import type { DeliveryAttempt, DeliveryState, Webhook, WebhookDelivery } from '../../domain/model';
import type { WebhookStore } from '../../domain/ports';
import type { AttemptDoc, DeliveryClaimDoc, DeliveryDoc, TelemetryModels, WebhookDoc } from './models';
import type { WebhookSecretBox } from './webhook-secret-box';

/** Due deliveries read per claim: enough that dispatchers claiming at once find one each. */
const CLAIM_CANDIDATES = 16;
/** Takes of one due time after claims that lapsed (holders that died before moving it on). */
const MAX_CLAIM_TAKES = 64;

/** Webhooks and their deliveries; each webhook's secret is stored sealed (webhook-secret-box.ts). */
export class MongoWebhookStore implements WebhookStore {
  constructor(
    private readonly models: Pick<TelemetryModels, 'Webhook' | 'Delivery' | 'DeliveryClaim'>,
    private readonly secrets: WebhookSecretBox,
  ) {}

  /** The webhook of a document, its secret opened; one stored in plain text or under an older key is sealed anew. */
  private async webhookOf(doc: WebhookDoc): Promise<Webhook> {
    const { secret, reseal } = this.secrets.open(doc.secret, doc._id);
    if (reseal) {
      // Only if nobody changed it meanwhile: every replica may reseal the same secret at once.
      await collectionOf(this.models.Webhook).updateOne({ _id: doc._id, secret: doc.secret }, { $set: { secret: this.secrets.seal(secret, doc._id) } });
    }
    return { id: doc._id, projectId: doc.project_id, url: doc.url, events: doc.events, secret, createdAt: doc.created_at };
  }

  async insertWebhook(webhook: Webhook): Promise<void> {
    await collectionOf(this.models.Webhook).insertOne({
      _id: webhook.id,
      project_id: webhook.projectId,
      url: webhook.url,
      events: webhook.events,
      secret: this.secrets.seal(webhook.secret, webhook.id),
      created_at: webhook.createdAt,
    });
  }

  async listWebhooks(projectId: string): Promise<Webhook[]> {
    const docs = await this.models.Webhook.find({ project_id: projectId }).sort({ created_at: 1, _id: 1 }).lean<WebhookDoc[]>();
    return Promise.all(docs.map((doc) => this.webhookOf(doc)));
  }

  async findWebhook(webhookId: string): Promise<Webhook | null> {
    const doc = await this.models.Webhook.findById(webhookId).lean<WebhookDoc>();
    return doc ? this.webhookOf(doc) : null;
  }

  async deleteWebhook(projectId: string, webhookId: string): Promise<boolean> {
    const { deletedCount } = await this.models.Webhook.deleteOne({ _id: webhookId, project_id: projectId });
    if (deletedCount === 0) return false;
    await this.models.Delivery.deleteMany({ webhook_id: webhookId });
    await this.models.DeliveryClaim.deleteMany({ webhook_id: webhookId });
    return true;
  }

  async insertDeliveries(deliveries: WebhookDelivery[]): Promise<void> {
    // One at a time: a duplicate (an event delivered again) must not stop the others.
    for (const delivery of deliveries) {
      await insertUnique(collectionOf(this.models.Delivery), {
        _id: delivery.id,
        webhook_id: delivery.webhookId,
        project_id: delivery.projectId,
        event: delivery.event,
        audit_event_id: delivery.auditEventId,
        body: delivery.body,
        state: delivery.state,
        attempts: [],
        next_attempt_at: delivery.nextAttemptAt,
        created_at: delivery.createdAt,
        delivered_at: null,
      });
    }
  }

  /**
   * The due delivery first in line that no other dispatcher holds, claimed until `claimUntil`.
   * FerretDB v1's find-and-modify reads and then writes, so two replicas took one delivery and
   * its receiver got it twice: a claim is a unique insert instead, of `<delivery>#<due time>`,
   * and the holder then moves the due time to `claimUntil`. A delivery's due time only grows, so
   * each is claimed once; a holder that died before moving it leaves a claim that lapses at
   * `claimUntil`, after which the next take (`#1`, `#2`, …) is claimed the same way.
   */
  async claimDueDelivery(now: Date, claimUntil: Date): Promise<WebhookDelivery | null> {
    const due = await this.models.Delivery.find({ state: 'pending', next_attempt_at: { $lte: now } })
      .sort({ next_attempt_at: 1 })
      .limit(CLAIM_CANDIDATES)
      .lean<DeliveryDoc[]>();
    for (const doc of due) {
      if (!(await this.claim(doc, now, claimUntil))) continue;
      // Only if it is still what was read: a delivery finished meanwhile is not sent again.
      const moved = await this.models.Delivery.updateOne({ _id: doc._id, state: 'pending', next_attempt_at: doc.next_attempt_at }, { $set: { next_attempt_at: claimUntil } });
      if (moved.matchedCount === 1) return deliveryOf({ ...doc, next_attempt_at: claimUntil });
    }
    return null;
  }

  async firstPendingAt(): Promise<Date | null> {
    const [first] = await this.models.Delivery.find({ state: 'pending' }, { next_attempt_at: 1 })
      .sort({ next_attempt_at: 1 })
      .limit(1)
      .lean<Pick<DeliveryDoc, 'next_attempt_at'>[]>();
    return first?.next_attempt_at ?? null;
  }

  private async claim(doc: DeliveryDoc, now: Date, claimUntil: Date): Promise<boolean> {
    const dueAt = doc.next_attempt_at!.getTime();
    for (let take = 0; take < MAX_CLAIM_TAKES; take++) {
      const id = `${doc._id}#${dueAt}#${take}`;
      const claim: DeliveryClaimDoc = { _id: id, delivery_id: doc._id, webhook_id: doc.webhook_id, until: claimUntil };
      if (await insertUnique(collectionOf(this.models.DeliveryClaim), claim)) return true;
      const held = await this.models.DeliveryClaim.findById(id).lean<DeliveryClaimDoc>();
      if (held && held.until > now) return false;
    }
    return false;
  }

  async finishAttempt(deliveryId: string, attempt: DeliveryAttempt, next: { state: DeliveryState; nextAttemptAt: Date | null }): Promise<void> {
    const logged: AttemptDoc = { at: attempt.at, status_code: attempt.statusCode, error: attempt.error, duration_ms: attempt.durationMs };
    const set = { state: next.state, next_attempt_at: next.nextAttemptAt, ...(next.state === 'delivered' ? { delivered_at: attempt.at } : {}) };
    // A failed attempt that ran beside a successful one (a lapsed claim) only logs itself.
    const changesState = await this.models.Delivery.updateOne(
      next.state === 'delivered' ? { _id: deliveryId } : { _id: deliveryId, state: 'pending' },
      { $push: { attempts: logged }, $set: set },
    );
    if (changesState.matchedCount === 0) await this.models.Delivery.updateOne({ _id: deliveryId }, { $push: { attempts: logged } });
    // A finished delivery is never claimed again: its claims have done their work.
    if (next.state !== 'pending') await this.models.DeliveryClaim.deleteMany({ delivery_id: deliveryId });
  }

  /** The pending deliveries, and when the oldest of them was enqueued (null with none). */
  async pendingDeliveries(): Promise<{ count: number; oldestCreatedAt: Date | null }> {
    const [count, oldest] = await Promise.all([
      this.models.Delivery.countDocuments({ state: 'pending' }),
      this.models.Delivery.findOne({ state: 'pending' }, { created_at: 1 }).sort({ created_at: 1 }).lean<Pick<DeliveryDoc, 'created_at'>>(),
    ]);
    return { count, oldestCreatedAt: oldest?.created_at ?? null };
  }

  async listDeliveries(webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    const docs = await this.models.Delivery.find({ webhook_id: webhookId }).sort({ created_at: -1, _id: -1 }).limit(limit).lean<DeliveryDoc[]>();
    return docs.map(deliveryOf);
  }
}

function deliveryOf(doc: DeliveryDoc): WebhookDelivery {
  return {
    id: doc._id,
    webhookId: doc.webhook_id,
    projectId: doc.project_id,
    event: doc.event,
    auditEventId: doc.audit_event_id,
    body: doc.body,
    state: doc.state,
    attempts: (doc.attempts ?? []).map((attempt) => ({ at: attempt.at, statusCode: attempt.status_code, error: attempt.error, durationMs: attempt.duration_ms })),
    nextAttemptAt: doc.next_attempt_at,
    createdAt: doc.created_at,
    deliveredAt: doc.delivered_at,
  };
}
