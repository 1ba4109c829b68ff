import { Bus } from '@ota/bus';
import { runService, serveGrpc } from '@ota/grpc';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { telemetry as pb } from '@ota/proto';
import { consumeAuditEvents } from './adapters/nats/audit-consumer';
import { HttpWebhookSender } from './adapters/http-webhook-sender';
import { WebhookSecretBox } from './adapters/mongo/webhook-secret-box';
import { registerTelemetryModels } from './adapters/mongo/models';
import { MongoTelemetryStore } from './adapters/mongo/mongo-telemetry-store';
import { MeteredWebhookStore } from './adapters/metered-webhook-store';
import { loadServingTelemetryConfig } from './config';
import { Telemetry } from './domain/telemetry';
import { WebhookDispatcher } from './domain/webhook-dispatcher';
import { Webhooks } from './domain/webhooks';
import { telemetryHandlers } from './grpc/telemetry-handlers';

const SERVICE = 'telemetry';

void runService(SERVICE, loadServingTelemetryConfig, async ({ config, logger, metrics }) => {

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger, metrics, commandMetrics: config.MONGODB_COMMAND_METRICS });
  const models = registerTelemetryModels(mongo);
  const store = new MongoTelemetryStore(models);
  const webhookStore = new MeteredWebhookStore(models, new WebhookSecretBox(config.WEBHOOK_SECRET_KEYS), metrics);
  await ensureIndexes(mongo);
  const telemetry = new Telemetry(store);
  const webhooks = new Webhooks(webhookStore, new HttpWebhookSender(config.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS), {
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    baseDelayMs: config.WEBHOOK_RETRY_BASE_MS,
    maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS,
    windowMs: config.WEBHOOK_RETRY_WINDOW_MS,
    allowNonPublicDestinations: config.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS,
  });
  const dispatcher = new WebhookDispatcher(webhooks, config.WEBHOOK_CONCURRENCY, (error, message) => logger.warn({ err: error }, message));

  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger, metrics });
  // The event is acknowledged once it and its webhook deliveries are stored: a crash in between
  // gets it again, and both writes keep one copy.
  await consumeAuditEvents(bus, async (event) => {
    if (await webhooks.enqueue(await telemetry.recordAudit(event))) dispatcher.wake();
  });
  dispatcher.start(config.WEBHOOK_POLL_INTERVAL_MS);

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.telemetry.v1.TelemetryService', pb.TelemetryServiceService, telemetryHandlers(telemetry, webhooks)),
  );

  // Stopped in reverse order: deliveries under way finish (and are stored) while the store is there.
  return [
    () => mongo.close(),
    () => bus.drain(),
    ...serving,
    () => dispatcher.stop(),
  ];
});
