import { Bus, DURABLES, SUBJECTS, TELEMETRY_STREAM, type AuditRecordedEvent, type DecisionRecordedEvent } from '@ota/bus';
import { GrpcServer, runUntilSignalled } from '@ota/grpc';
import { createLogger } from '@ota/logging';
import { ServiceMetrics, startMetricsServer } from '@ota/metrics';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { telemetry as pb } from '@ota/proto';
import { MongoTelemetryStore, registerTelemetryModels } from './adapters/mongo/mongo-telemetry-store';
import { loadTelemetryConfig } from './config';
import { Telemetry } from './domain/telemetry';
import { telemetryHandlers } from './grpc/telemetry-handlers';

const SERVICE = 'telemetry';
const logger = createLogger(SERVICE);

void runUntilSignalled(logger, async () => {
  const config = loadTelemetryConfig();
  logger.level = config.LOG_LEVEL;
  const metrics = new ServiceMetrics(SERVICE);

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE });
  const store = new MongoTelemetryStore(registerTelemetryModels(mongo));
  await ensureIndexes(mongo);
  const telemetry = new Telemetry(store);

  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger });
  await bus.ensureStreams();
  await bus.consumeDurable<DecisionRecordedEvent>(TELEMETRY_STREAM.name, DURABLES.telemetryDecisions, SUBJECTS.decisionRecorded, (event) =>
    telemetry.recordDecision(event),
  );
  await bus.consumeDurable<AuditRecordedEvent>(TELEMETRY_STREAM.name, DURABLES.telemetryAudit, SUBJECTS.auditRecorded, (event) =>
    telemetry.recordAudit(event),
  );

  const server = new GrpcServer({ logger, metrics });
  server.addService('ota.telemetry.v1.TelemetryService', pb.TelemetryServiceService, telemetryHandlers(telemetry));
  const port = await server.listen(`${config.GRPC_HOST}:${config.GRPC_PORT}`);
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);
  logger.info({ port, metricsPort: config.METRICS_PORT }, 'serving');

  return [
    () => mongo.close(),
    () => bus.drain(),
    () => new Promise<void>((resolve) => metricsServer.close(() => resolve())),
    () => server.shutdown(config.SHUTDOWN_GRACE_MS),
  ];
});
