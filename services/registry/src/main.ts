import { runService, serveGrpc } from '@ota/grpc';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { registry as pb } from '@ota/proto';
import { moveCheckEventsOntoDevices } from './adapters/mongo/data-migrations';
import { registerModels } from './adapters/mongo/models';
import { MongoRegistryStore } from './adapters/mongo/mongo-registry-store';
import { loadRegistryConfig } from './config';
import { Registry } from './domain/registry';
import { registryHandlers } from './grpc/registry-handlers';

const SERVICE = 'registry';

void runService(SERVICE, loadRegistryConfig, async ({ config, logger, metrics }) => {

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger, metrics, commandMetrics: config.MONGODB_COMMAND_METRICS });
  const models = registerModels(mongo);
  await ensureIndexes(mongo);
  await moveCheckEventsOntoDevices(models);
  const registry = new Registry({ store: new MongoRegistryStore(models) });

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.registry.v1.RegistryService', pb.RegistryServiceService, registryHandlers(registry)),
  );

  return [() => mongo.close(), ...serving];
});
