// `node dist/migrate.js`: creates this service's collections and indexes, moves stored data to
// its current shape, then exits (Helm hook Job).
import { runMigration } from '@ota/mongo';
import { addDevicePageKeys, addMembershipGroupKeys, addMembershipPageKeys, migrateDeviceProfiles, moveCheckEventsOntoDevices } from './adapters/mongo/data-migrations';
import { registerModels } from './adapters/mongo/models';
import { loadRegistryConfig } from './config';

void runMigration('registry', loadRegistryConfig(), registerModels, async (models) => {
  await moveCheckEventsOntoDevices(models);
  await addDevicePageKeys(models);
  await addMembershipPageKeys(models);
  await addMembershipGroupKeys(models);
  await migrateDeviceProfiles(models);
});
