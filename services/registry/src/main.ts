import { DURABLES, SUBJECTS, TELEMETRY_STREAM, Bus, type DecisionRecordedEvent } from '@ota/bus';
import { runUntilSignalled, serveGrpc } from '@ota/grpc';
import { createLogger } from '@ota/logging';
import { ServiceMetrics } from '@ota/metrics';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { registry as pb } from '@ota/proto';
import { registerModels } from './adapters/mongo/models';
import { MongoRegistryStore } from './adapters/mongo/mongo-registry-store';
import { loadRegistryConfig } from './config';
import { Registry } from './domain/registry';
import { registryHandlers } from './grpc/registry-handlers';

const SERVICE = 'registry';
const logger = createLogger(SERVICE);

void runUntilSignalled(logger, async () => {
  const config = loadRegistryConfig();
  logger.level = config.LOG_LEVEL;
  const metrics = new ServiceMetrics(SERVICE);

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE });
  const models = registerModels(mongo);
  await ensureIndexes(mongo);
  const registry = new Registry({ store: new MongoRegistryStore(models, config.HEARTBEAT_RESOLUTION_MS) });

  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger });
  await bus.ensureStreams();
  await bus.consumeDurable<DecisionRecordedEvent>(
    TELEMETRY_STREAM.name,
    DURABLES.registryCheckStatus,
    SUBJECTS.decisionRecorded,
    async (event) => {
      if (event.device_uuid) await registry.recordCheckOutcome(event.project_id, event.device_uuid, event.status, new Date(event.created_at));
    },
  );

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.registry.v1.RegistryService', pb.RegistryServiceService, registryHandlers(registry)),
  );

  return [
    () => mongo.close(),
    () => bus.drain(),
    ...serving,
  ];
});
