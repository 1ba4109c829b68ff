// `node dist/migrate.js`: creates this service's collections and indexes, then exits (Helm hook Job).
import { runMigration } from '@ota/mongo';
import { registerRolloutModels } from './adapters/mongo/models';
import { MongoRolloutStore } from './adapters/mongo/mongo-rollout-store';
import { loadRolloutConfig } from './config';

void runMigration('rollout', loadRolloutConfig(), registerRolloutModels, (models) => new MongoRolloutStore(models).backfillStatusBits());
