// `node dist/migrate.js`: creates this service's collections and indexes, then exits (Helm hook Job).
import { runMigration } from '@ota/mongo';
import { registerGatewayModels } from './adapters/mongo/models';
import { loadGatewayConfig } from './config';

void runMigration('gateway', loadGatewayConfig(), registerGatewayModels);
