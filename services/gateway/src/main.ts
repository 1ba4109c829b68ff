import { createServer, type Server } from 'node:http';
import { Bus } from '@ota/bus';
import { runService } from '@ota/grpc';
import { readinessGauge, startMetricsServer } from '@ota/metrics';
import { connectMongo, ensureIndexes, pingMongo } from '@ota/mongo';
import { createApp } from './app';
import { answerUnparsableRequest } from './http/http-syntax';
import { closeServiceClients, createServiceClients } from './adapters/grpc/service-clients';
import { registerGatewayModels } from './adapters/mongo/models';
import { MongoAccountStore } from './adapters/mongo/mongo-account-store';
import { OpenIdProvider } from './adapters/oidc/openid-provider';
import { SignInSessions } from './auth/sign-in';
import { MongoIdempotencyStore } from './adapters/mongo/mongo-idempotency-store';
import { AuditOutboxRelay, JetStreamAuditLog } from './adapters/nats/audit-log';
import { followPlanChanges } from './adapters/nats/plan-changes';
import { PresignedDownloadUrls } from './adapters/s3/presigned-download-urls';
import { PlanCache } from './auth/plan-cache';
import { loadServingGatewayConfig } from './config';
import { DownloadUrlSigner } from './http/download-url';

const SERVICE = 'gateway';

void runService(SERVICE, loadServingGatewayConfig, async ({ config, logger, metrics }) => {

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger, metrics, commandMetrics: config.MONGODB_COMMAND_METRICS });
  const models = registerGatewayModels(mongo);
  const store = new MongoAccountStore(models);
  await ensureIndexes(mongo);
  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger, metrics });
  await bus.ensureStreams();
  const clients = createServiceClients(config, metrics);
  const auditRelay = new AuditOutboxRelay(bus, models, metrics, logger, config.AUDIT_OUTBOX_RELAY_INTERVAL_MS);
  auditRelay.start();

  const plans = new PlanCache(store, config.PLAN_CACHE_TTL_MS);
  // Expired Idempotency-Keys are deleted hourly: FerretDB has no TTL indexes.
  const idempotency = new MongoIdempotencyStore(models);
  const idempotencySweep = setInterval(() => {
    idempotency.deleteExpired(new Date()).catch((error: unknown) => logger.warn({ err: error }, 'deleting expired idempotency keys failed; the next sweep tries again'));
  }, 3_600_000);
  idempotencySweep.unref();
  followPlanChanges(bus, plans);
  // Single sign-on, when an OpenID provider is configured (docs/operations.md, "Single sign-on").
  const provider = config.OIDC_ISSUER
    ? new OpenIdProvider({ issuer: config.OIDC_ISSUER, clientId: config.OIDC_CLIENT_ID, clientSecret: config.OIDC_CLIENT_SECRET, scopes: config.OIDC_SCOPES, groupsClaim: config.OIDC_GROUPS_CLAIM })
    : undefined;
  const signIn = provider && { provider, sessions: new SignInSessions(store, provider, config.OIDC_CONFIRM_SECONDS) };
  const presignedDownloads = config.DOWNLOAD_URLS === 'presigned' ? new PresignedDownloadUrls(config, logger) : undefined;

  const checkReadiness = async () => {
    await pingMongo(mongo).catch(() => Promise.reject(new Error('MongoDB is unreachable')));
    if (bus.connection.isClosed()) throw new Error('NATS is unreachable');
    await bus.connection.flush().catch(() => Promise.reject(new Error('NATS is unreachable')));
    for (const [name, client] of Object.entries(clients)) {
      await client.waitForReady(1_000).catch(() => Promise.reject(new Error(`the ${name} service is unreachable`)));
    }
  };

  const app = createApp({
    config,
    logger,
    metrics,
    store,
    clients,
    audit: new JetStreamAuditLog(bus, models, metrics, logger),
    signer: new DownloadUrlSigner(config.OTA_URL_SIGNING_KEY, config.OTA_URL_TTL_SECONDS),
    presignedDownloads,
    plans,
    idempotency,
    signIn,
    checkReadiness,
  });

  // A client cannot hold a connection by sending slowly: its headers, its whole request and an idle
  // keep-alive each have a deadline, checked every second (docs/security.md, "Slow clients").
  const server: Server = createServer(
    {
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    },
    app.callback(),
  );
  server.on('clientError', answerUnparsableRequest);
  server.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  readinessGauge(metrics, () => checkReadiness().then(() => true, () => false));
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.METRICS_HOST);
  logger.info({ port: config.GATEWAY_PORT, metricsPort: config.METRICS_PORT }, 'serving');

  return [
    () => clearInterval(idempotencySweep),
    () => mongo.close(),
    () => bus.drain(),
    () => auditRelay.stop(),
    () => closeServiceClients(clients),
    () => presignedDownloads?.close(),
    () => new Promise<void>((resolve) => metricsServer.close(() => resolve())),
    // Stop accepting, let in-flight requests finish, then drop idle keep-alive connections.
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  ];
});
