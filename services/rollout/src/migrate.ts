// `node dist/migrate.js`: creates this service's collections and indexes, moves stored data to its
// current shape, then exits (Helm hook Job).
import { runMigration } from '@ota/mongo';
import { registerRolloutModels } from './adapters/mongo/models';
import { MongoDeviceStateStore } from './adapters/mongo/mongo-device-state-store';
import { loadRolloutConfig } from './config';

void runMigration('rollout', loadRolloutConfig(), registerRolloutModels, async (models) => {
  const deviceStates = new MongoDeviceStateStore(models);
  await deviceStates.backfillStatusBits();
  await deviceStates.backfillDownloads();
  await deviceStates.addStatusPageKeys();
});
