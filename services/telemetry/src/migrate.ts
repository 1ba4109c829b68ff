// `node dist/migrate.js`: creates this service's collections and indexes, then exits (Helm hook Job).
import { runMigration } from '@ota/mongo';
import { registerTelemetryModels } from './adapters/mongo/models';
import { loadTelemetryConfig } from './config';

void runMigration('telemetry', loadTelemetryConfig(), registerTelemetryModels);
