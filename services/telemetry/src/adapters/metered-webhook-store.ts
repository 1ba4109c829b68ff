import { sharedRead, type ServiceMetrics } from '@ota/metrics';
import type { DeliveryAttempt, DeliveryState } from '../domain/model';
import { MongoWebhookStore } from './mongo/mongo-webhook-store';
import type { TelemetryModels } from './mongo/models';
import type { WebhookSecretBox } from './mongo/webhook-secret-box';

/**
 * The webhook store, counting each attempt's result as it is logged (docs/operations.md, "Metrics")
 * and reading the pending deliveries when Prometheus scrapes.
 */
export class MeteredWebhookStore extends MongoWebhookStore {
  private readonly attempts;

  constructor(models: Pick<TelemetryModels, 'Webhook' | 'Delivery' | 'DeliveryClaim'>, secrets: WebhookSecretBox, metrics: ServiceMetrics) {
    super(models, secrets);
    this.attempts = metrics.counter('ota_webhook_delivery_attempts_total', 'Webhook delivery attempts, by result (delivered; retrying: failed, tried again later; failed: failed, and the retry window is over).', ['result']);
    for (const result of ['delivered', 'retrying', 'failed']) this.attempts.inc({ result }, 0);
    // Both gauges come from one read per scrape.
    const readPending = sharedRead(() => this.pendingDeliveries());
    metrics.gauge('ota_webhook_pending_deliveries', 'Webhook deliveries waiting for their first or next attempt.', [], async (gauge) => {
      const pending = await readPending();
      if (pending) gauge.set(pending.count);
    });
    metrics.gauge('ota_webhook_oldest_pending_delivery_age_seconds', 'How long the oldest pending webhook delivery has waited since its event (0 with none).', [], async (gauge) => {
      const pending = await readPending();
      if (pending) gauge.set(pending.oldestCreatedAt ? Math.max(0, (Date.now() - pending.oldestCreatedAt.getTime()) / 1000) : 0);
    });
  }

  override async finishAttempt(deliveryId: string, attempt: DeliveryAttempt, next: { state: DeliveryState; nextAttemptAt: Date | null }): Promise<void> {
    await super.finishAttempt(deliveryId, attempt, next);
    this.attempts.inc({ result: next.state === 'pending' ? 'retrying' : next.state });
  }
}
