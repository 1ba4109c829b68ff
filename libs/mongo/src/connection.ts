import mongoose, { type Connection } from 'mongoose';

export interface MongoSettings {
  uri: string;
  database: string;
  /** Connections this process may open; the hot paths keep a few busy at once. */
  maxPoolSize?: number;
}

/**
 * One shared connection per process, opened at start. Indexes are built by `syncIndexes`, not by
 * mongoose's autoIndex, so that start-up order is explicit and failures are visible.
 */
export async function connectMongo(settings: MongoSettings): Promise<Connection> {
  const connection = mongoose.createConnection(settings.uri, {
    dbName: settings.database,
    maxPoolSize: settings.maxPoolSize ?? 20,
    autoIndex: false,
    autoCreate: false,
    serverSelectionTimeoutMS: 10_000,
  });
  await connection.asPromise();
  return connection;
}

/** Creates the declared indexes of every model of the connection. */
export async function ensureIndexes(connection: Connection): Promise<void> {
  for (const model of Object.values(connection.models)) {
    await model.createCollection().catch((error: { codeName?: string }) => {
      if (error.codeName !== 'NamespaceExists') throw error;
    });
    await model.createIndexes();
  }
}

/** Answers once the server does: the readiness probes' check. */
export async function pingMongo(connection: Connection): Promise<void> {
  await connection.db!.admin().command({ ping: 1 });
}
