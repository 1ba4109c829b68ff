// `node dist/migrate.js`: creates this service's collections and indexes, then exits (Helm hook Job).
import { runMigration } from '@ota/mongo';
import { registerArtifactModels } from './adapters/mongo/models';
import { loadArtifactsConfig } from './config';

void runMigration('artifacts', loadArtifactsConfig(), registerArtifactModels);
