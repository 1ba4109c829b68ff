import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { webhookDeliveryJson, webhookJson } from '../http/present';
import * as R from '../http/response-schemas';
import { cappedLimit } from '../http/schemas';
import { createWebhookBody, WEBHOOK_DELIVERIES_LIMIT, webhookDeliveriesQuery } from '../http/webhook-schemas';
import { pathId, rpc } from './context';

/** Project webhooks (docs/api.md, "Webhooks"): kept and delivered by the telemetry service. */
export function webhookRoutes(table: OperationTable, deps: GatewayDeps): void {
  const api = table.section({ tag: 'Webhooks', access: 'developer' });
  const { clients, audit } = deps;

  api.add(
    {
      route: 'POST /projects/:id/webhooks/',
      operationId: 'createWebhook',
      summary: 'Create a webhook',
      description:
        'Every later event of the chosen kinds is POSTed to `url` as JSON, signed with HMAC-SHA256 (`OTA-Signature: v1=<hex>` over `<OTA-Timestamp>.<body>`), and retried with exponential back-off until the receiver answers 2xx (for 24 hours by default). The `secret` is in this answer only. At most 20 webhooks per project.',
      project: 'operator',
      body: createWebhookBody,
      responses: { 201: R.WebhookCreated },
    },
    async (ctx, { project, principal, body }) => {
      const { webhook, secret } = await clients.telemetry.createWebhook({ projectId: project.id, url: body.url, events: body.events }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'webhook.created', targetType: 'webhook', targetId: webhook!.id, details: { url: body.url, events: body.events } });
      ctx.status = 201;
      ctx.body = webhookJson(webhook!, secret);
    },
  );

  api.add(
    { route: 'GET /projects/:id/webhooks/', operationId: 'listWebhooks', summary: 'List webhooks', description: 'Oldest first; secrets are never shown again.', project: 'viewer', responses: { 200: R.arrayOf(R.Webhook) } },
    async (ctx, { project }) => {
      ctx.body = (await clients.telemetry.listWebhooks({ projectId: project.id }, rpc(ctx))).webhooks.map((webhook) => webhookJson(webhook));
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/webhooks/:wid/',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook',
      description: 'Its pending deliveries are dropped and its delivery log with it.',
      project: 'operator',
      responses: { 204: null },
    },
    async (ctx, { project, principal }) => {
      const webhookId = pathId(ctx, 'wid', 'webhook');
      await clients.telemetry.deleteWebhook({ projectId: project.id, webhookId }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'webhook.deleted', targetType: 'webhook', targetId: webhookId });
      ctx.status = 204;
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/webhooks/:wid/deliveries/',
      operationId: 'listWebhookDeliveries',
      summary: "A webhook's delivery log",
      description: 'Newest first, `limit` deliveries (default 20, at most 100), each with every attempt: when, the status the receiver answered, and why it failed.',
      project: 'viewer',
      query: webhookDeliveriesQuery,
      responses: { 200: R.arrayOf(R.WebhookDelivery) },
    },
    async (ctx, { project, query }) => {
      const { deliveries } = await clients.telemetry.listWebhookDeliveries(
        { projectId: project.id, webhookId: pathId(ctx, 'wid', 'webhook'), limit: cappedLimit(query.limit, WEBHOOK_DELIVERIES_LIMIT.default, WEBHOOK_DELIVERIES_LIMIT.max) },
        rpc(ctx),
      );
      ctx.body = deliveries.map(webhookDeliveryJson);
    },
  );
}
