import mongoose, { type Connection } from 'mongoose';

export interface MongoSettings {
  uri: string;
  database: string;
  /** Connections this process may open; the hot paths keep a few busy at once. */
  maxPoolSize?: number;
  /** Where the server's reachability is reported (see reportReachability). */
  logger?: ReachabilityLogger;
}

export interface ReachabilityLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** While the server is unreachable, failed heartbeats are reported at most this often. */
const UNREACHABLE_REPORT_INTERVAL_MS = 30_000;

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
  if (settings.logger) reportReachability(connection, settings.logger);
  return connection;
}

/**
 * Logs when the driver loses the server and when it has it back, and, while it is lost, how many
 * of the driver's heartbeats failed: an outage that outlasts the server's return with no failed
 * heartbeats means the driver stopped checking, which only a restart of the process mends.
 */
function reportReachability(connection: Connection, logger: ReachabilityLogger): void {
  const client = connection.getClient();
  let failedHeartbeats = 0;
  let reportedAt = 0;
  client.on('serverDescriptionChanged', (event) => {
    const before = event.previousDescription.type;
    const after = event.newDescription.type;
    if (before === after) return;
    if (after === 'Unknown') {
      failedHeartbeats = 0;
      reportedAt = Date.now();
      logger.warn({ mongodb: event.address, reason: event.newDescription.error?.message }, 'MongoDB server unreachable');
    } else if (before === 'Unknown') {
      logger.info({ mongodb: event.address, failedHeartbeats }, 'MongoDB server reachable again');
    }
  });
  client.on('serverHeartbeatFailed', (event) => {
    failedHeartbeats += 1;
    if (Date.now() - reportedAt < UNREACHABLE_REPORT_INTERVAL_MS) return;
    reportedAt = Date.now();
    logger.warn({ mongodb: event.connectionId, failedHeartbeats, reason: event.failure.message }, 'MongoDB server still unreachable');
  });
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
