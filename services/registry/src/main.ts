import { runUntilSignalled, serveGrpc } from '@ota/grpc';
import { createLogger } from '@ota/logging';
import { ServiceMetrics } from '@ota/metrics';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { registry as pb } from '@ota/proto';
import { moveCheckEventsOntoDevices } from './adapters/mongo/data-migrations';
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

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger });
  const models = registerModels(mongo);
  await ensureIndexes(mongo);
  await moveCheckEventsOntoDevices(models);
  const registry = new Registry({ store: new MongoRegistryStore(models) });

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.registry.v1.RegistryService', pb.RegistryServiceService, registryHandlers(registry)),
  );

  return [() => mongo.close(), ...serving];
});
