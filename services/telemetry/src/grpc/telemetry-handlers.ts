import type { Handlers } from '@ota/grpc';
import { type telemetry as pb } from '@ota/proto';
import type { Telemetry } from '../domain/telemetry';
import type { Webhook } from '../domain/model';
import type { Webhooks } from '../domain/webhooks';

export function telemetryHandlers(telemetry: Telemetry, webhooks: Webhooks): Handlers<typeof pb.TelemetryServiceService> {
  return {
    async listAuditEvents(request) {
      const records = await telemetry.listAudit(request.projectId, request.limit || 100, request.beforeId, request.action);
      return {
        events: records.map((record) => ({
          id: record.id,
          projectId: record.projectId,
          action: record.action,
          actorType: record.actorType,
          actorId: record.actorId,
          tokenPrefix: record.tokenPrefix,
          actorRole: record.actorRole,
          actorVia: record.actorVia,
          targetType: record.targetType,
          targetId: record.targetId,
          createdAt: record.createdAt,
          detailsJson: JSON.stringify(record.details),
        })),
      };
    },
    async createWebhook(request) {
      const webhook = await webhooks.create(request.projectId, request.url, request.events);
      return { webhook: webhookMessage(webhook), secret: webhook.secret };
    },
    async listWebhooks(request) {
      return { webhooks: (await webhooks.list(request.projectId)).map(webhookMessage) };
    },
    async deleteWebhook(request) {
      await webhooks.delete(request.projectId, request.webhookId);
      return {};
    },
    async listWebhookDeliveries(request) {
      const deliveries = await webhooks.deliveries(request.projectId, request.webhookId, request.limit);
      return {
        deliveries: deliveries.map((delivery) => ({
          id: delivery.id,
          event: delivery.event,
          auditEventId: delivery.auditEventId,
          state: delivery.state,
          attempts: delivery.attempts.map((attempt) => ({ ...attempt, statusCode: attempt.statusCode ?? undefined })),
          nextAttemptAt: delivery.nextAttemptAt ?? undefined,
          createdAt: delivery.createdAt,
          deliveredAt: delivery.deliveredAt ?? undefined,
          body: delivery.body,
        })),
      };
    },
  };
}

function webhookMessage(webhook: Webhook): pb.Webhook {
  return { id: webhook.id, projectId: webhook.projectId, url: webhook.url, events: webhook.events, createdAt: webhook.createdAt };
}
