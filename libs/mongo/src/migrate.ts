import type { Connection } from 'mongoose';
import { connectMongo, ensureIndexes } from './connection';

/**
 * The body of each service's `dist/migrate.js`: creates the service's collections and indexes in
 * its database, prints one JSON line, and exits (1 on failure, with the reason on stderr). The Helm
 * chart runs these in a hook Job, so that an upgrade's new indexes exist before its pods start;
 * every service also ensures them at start, so a missed Job costs time, never correctness.
 */
export async function runMigration<M>(
  service: string,
  settings: { MONGODB_URI: string; MONGODB_DATABASE: string },
  registerModels: (connection: Connection) => M,
  /** Idempotent changes to stored documents, run after the indexes exist. */
  migrateData?: (models: M) => Promise<void>,
): Promise<void> {
  try {
    const connection = await connectMongo({ uri: settings.MONGODB_URI, database: settings.MONGODB_DATABASE });
    const models = registerModels(connection);
    await ensureIndexes(connection);
    await migrateData?.(models);
    const collections = Object.values(connection.models).map((model) => model.collection.collectionName).sort();
    await connection.close();
    process.stdout.write(`${JSON.stringify({ service, database: settings.MONGODB_DATABASE, collections })}\n`);
  } catch (error) {
    process.stderr.write(`${service}: migration failed: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
