import { Bus, DURABLES, SUBJECTS, TELEMETRY_STREAM, type AuditRecordedEvent } from '@ota/bus';
import { runUntilSignalled, serveGrpc } from '@ota/grpc';
import { createLogger } from '@ota/logging';
import { ServiceMetrics } from '@ota/metrics';
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

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger });
  const store = new MongoTelemetryStore(registerTelemetryModels(mongo));
  await ensureIndexes(mongo);
  const telemetry = new Telemetry(store);

  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger });
  await bus.ensureStreams();
  await bus.consumeDurable<AuditRecordedEvent>(TELEMETRY_STREAM.name, DURABLES.telemetryAudit, SUBJECTS.auditRecorded, (event) =>
    telemetry.recordAudit(event),
  );

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.telemetry.v1.TelemetryService', pb.TelemetryServiceService, telemetryHandlers(telemetry)),
  );

  return [
    () => mongo.close(),
    () => bus.drain(),
    ...serving,
  ];
});
