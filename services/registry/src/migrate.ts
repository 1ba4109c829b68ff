// `node dist/migrate.js`: creates this service's collections and indexes, then exits (Helm hook Job).
import { runMigration } from '@ota/mongo';
import { registerModels } from './adapters/mongo/models';
import { loadRegistryConfig } from './config';

void runMigration('registry', loadRegistryConfig(), registerModels);
