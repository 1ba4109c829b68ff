import type { ServiceMetrics } from '@ota/metrics';
import type { MongoClient } from 'mongodb';
import mongoose, { type Connection } from 'mongoose';
import { quietPoolMaintenance } from './pool-maintenance';

export interface MongoSettings {
  uri: string;
  database: string;
  /** Connections this process may open; the hot paths keep a few busy at once. */
  maxPoolSize?: number;
  /** Where the server's reachability is reported, and a stalled driver mended (see superviseDriver). */
  logger?: ReachabilityLogger;
  /** How often the driver checks the server (the driver's default, 10 s); tests shorten it. */
  heartbeatFrequencyMS?: number;
  /** How long a connection, a monitoring check's included, may take to open (10 s); tests shorten it. */
  connectTimeoutMS?: number;
  /** Where the server's reachability, each operation's latency, lost connections and, with `commandMetrics`, each command's latency and failure are counted. */
  metrics?: ServiceMetrics;
  /** Whether each command is also measured by name (MONGODB_COMMAND_METRICS, off unless true): the driver then reports every command. */
  commandMetrics?: boolean;
}

export interface ReachabilityLogger {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** While the server is unreachable, failed heartbeats are reported at most this often. */
const UNREACHABLE_REPORT_INTERVAL_MS = 30_000;
const HEARTBEAT_FREQUENCY_MS = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * One shared connection per process, opened at start. Indexes are built by `syncIndexes`, not by
 * mongoose's autoIndex, so that start-up order is explicit and failures are visible.
 */
export async function connectMongo(settings: MongoSettings): Promise<Connection> {
  // Mongoose otherwise builds a stack trace for every query it runs (to explain a query run twice,
  // which our code never does): a CPU profile of the check showed it in the gateway and registry
  // (docs/performance.md, change 10).
  mongoose.set('skipOriginalStackTraces', true);
  const connection = mongoose.createConnection(settings.uri, {
    dbName: settings.database,
    maxPoolSize: settings.maxPoolSize ?? 20,
    autoIndex: false,
    autoCreate: false,
    serverSelectionTimeoutMS: 10_000,
    heartbeatFrequencyMS: settings.heartbeatFrequencyMS ?? HEARTBEAT_FREQUENCY_MS,
    connectTimeoutMS: settings.connectTimeoutMS ?? CONNECT_TIMEOUT_MS,
    // The driver reports each command only when asked.
    monitorCommands: settings.metrics !== undefined && settings.commandMetrics === true,
  });
  await connection.asPromise();
  quietPoolMaintenance(connection.getClient());
  if (settings.metrics) measureMongo(connection, settings.metrics, settings.commandMetrics === true);
  if (settings.logger) {
    reportReachability(connection, settings.logger);
    superviseDriver(connection, settings.logger, settings.heartbeatFrequencyMS ?? HEARTBEAT_FREQUENCY_MS, settings.connectTimeoutMS ?? CONNECT_TIMEOUT_MS);
  }
  return connection;
}

/**
 * The store's golden signals (docs/operations.md, "Metrics"): whether the driver's monitor reaches
 * the server, each operation's latency and the connections lost (measureOperations), and when
 * MONGODB_COMMAND_METRICS is on, each command's latency and failures by command name (find,
 * insert, aggregate, ...: the driver's own, a bounded set).
 */
function measureMongo(connection: Connection, metrics: ServiceMetrics, perCommand: boolean): void {
  const client = connection.getClient();
  let reachable = true;
  client.on('serverHeartbeatSucceeded', () => {
    reachable = true;
  });
  client.on('serverHeartbeatFailed', () => {
    reachable = false;
  });
  metrics.gauge('ota_mongodb_reachable', '1 while the driver reaches the MongoDB server, 0 from a failed heartbeat until one succeeds.', [], (gauge) => {
    gauge.set(reachable ? 1 : 0);
  });
  measureOperations(client, metrics);
  if (perCommand) measureCommands(client, metrics);
}

/**
 * Each operation's latency, from the driver's pool: a command checks a connection out, and checks
 * it in once its answer is read, so the time between is the command's round trip with its
 * answer's decoding. The pool reports both whatever the settings, and neither event carries the
 * command or its answer: unlike the per-command events (measureCommands), nothing is copied or
 * decoded for them, which is why this is always on (docs/performance.md, "Store latency from the
 * pool"). The interval is timed here, as the events' own times have millisecond resolution.
 */
function measureOperations(client: MongoClient, metrics: ServiceMetrics): void {
  const duration = metrics.histogram('ota_mongodb_operation_duration_seconds', 'Time a pooled connection is held for one MongoDB command: from check-out to check-in, after its answer is read.', []).seriesOf({});
  const lost = metrics.counter('ota_mongodb_connections_lost_total', 'Pooled MongoDB connections closed by an error (a network failure or timeout); the command on each, if any, failed.', []);
  // Connection ids are counted per pool, and a pool serves one server: the address tells them apart.
  const checkedOutAt = new Map<string, Map<number | string, number>>();
  // The driver spells the address anew for every event, so a Map lookup would hash it each time;
  // comparing it with the last one's is cheaper, and a process mostly talks to one server.
  let lastAddress: string | undefined;
  let lastPool = new Map<number | string, number>();
  const poolOf = (address: string) => {
    if (address === lastAddress) return lastPool;
    let pool = checkedOutAt.get(address);
    if (pool === undefined) checkedOutAt.set(address, (pool = new Map()));
    lastAddress = address;
    return (lastPool = pool);
  };
  client.on('connectionCheckedOut', (event) => {
    poolOf(event.address).set(event.connectionId, performance.now());
  });
  client.on('connectionCheckedIn', (event) => {
    const pool = poolOf(event.address);
    const since = pool.get(event.connectionId);
    if (since === undefined) return;
    pool.delete(event.connectionId);
    duration.observe((performance.now() - since) / 1000);
  });
  client.on('connectionClosed', (event) => {
    if (event.reason === 'error') lost.inc();
  });
}

/** Each command's latency and failures by command name: the driver's command monitoring, opt-in. */
function measureCommands(client: MongoClient, metrics: ServiceMetrics): void {
  const duration = metrics.histogram('ota_mongodb_command_duration_seconds', 'Time from sending a MongoDB command to its answer, by command.', ['command']);
  const failures = metrics.counter('ota_mongodb_command_failures_total', 'MongoDB commands that failed (an error answer or a lost connection), by command.', ['command']);
  // Each command's failures are served at zero from its first success, so that a rate of them is
  // 0, not missing, while nothing fails.
  const seen = new Set<string>();
  client.on('commandSucceeded', (event) => {
    duration.observe({ command: event.commandName }, event.duration / 1000);
    if (seen.has(event.commandName)) return;
    seen.add(event.commandName);
    failures.inc({ command: event.commandName }, 0);
  });
  client.on('commandFailed', (event) => {
    duration.observe({ command: event.commandName }, event.duration / 1000);
    failures.inc({ command: event.commandName });
  });
}

/**
 * Logs when the driver loses the server and when it has it back, and, while it is lost, how many
 * of the driver's heartbeats failed.
 */
function reportReachability(connection: Connection, logger: ReachabilityLogger): void {
  const client = connection.getClient();
  let unreachable = false;
  let failedHeartbeats = 0;
  let reportedAt = 0;
  client.on('serverDescriptionChanged', (event) => {
    const before = event.previousDescription.type;
    const after = event.newDescription.type;
    if (before === after) return;
    if (after === 'Unknown') {
      unreachable = true;
      failedHeartbeats = 0;
      reportedAt = Date.now();
      logger.warn({ mongodb: event.address, reason: event.newDescription.error?.message }, 'MongoDB server unreachable');
    } else if (before === 'Unknown') {
      unreachable = false;
      logger.info({ mongodb: event.address, failedHeartbeats }, 'MongoDB server reachable again');
    }
  });
  // The heartbeat that finds the server gone fails before the server is marked unreachable: only
  // the ones after are counted.
  client.on('serverHeartbeatFailed', (event) => {
    if (!unreachable) return;
    failedHeartbeats += 1;
    if (Date.now() - reportedAt < UNREACHABLE_REPORT_INTERVAL_MS) return;
    reportedAt = Date.now();
    logger.warn({ mongodb: event.connectionId, failedHeartbeats, reason: event.failure.message }, 'MongoDB server still unreachable');
  });
}

/**
 * Reopens the driver's client when its monitor stopped checking the server. The driver checks the
 * server every heartbeat, whether it is reachable or not, and each check ends within the connect
 * timeout; a driver that has made no check for two of both together has stopped. In the fault
 * suite's runs, a process's driver sometimes never checked again after FerretDB's restart, and
 * answered every operation with an error until the process was restarted; reopening the client
 * (as a restart would) gives it new monitors and pools. Mongoose's models keep working on the
 * reopened client.
 */
function superviseDriver(connection: Connection, logger: ReachabilityLogger, heartbeatFrequencyMS: number, connectTimeoutMS: number): void {
  const client = connection.getClient();
  const stalledAfterMs = 2 * (heartbeatFrequencyMS + connectTimeoutMS);
  let lastCheckAt = Date.now();
  const checked = () => {
    lastCheckAt = Date.now();
  };
  for (const event of ['serverHeartbeatStarted', 'serverHeartbeatSucceeded', 'serverHeartbeatFailed'] as const) client.on(event, checked);
  // A load-balanced deployment has no monitor, so no check to miss.
  let loadBalanced = false;
  client.on('topologyDescriptionChanged', (event) => {
    loadBalanced = event.newDescription.type === 'LoadBalanced';
  });
  let reopening = false;
  let closed = false;
  const timer = setInterval(() => {
    const silentForMs = Date.now() - lastCheckAt;
    if (reopening || closed || loadBalanced || silentForMs < stalledAfterMs) return;
    reopening = true;
    logger.error({ silentForMs }, 'MongoDB driver stopped checking the server; reopening its client');
    void (async () => {
      try {
        await client.close();
        if (closed) return;
        await client.connect();
        if (closed) await client.close();
        else logger.info({}, 'MongoDB client reopened');
      } catch (error) {
        logger.warn({ reason: (error as Error).message }, 'reopening the MongoDB client failed; trying again');
      } finally {
        reopening = false;
        checked();
      }
    })();
  }, Math.min(5_000, stalledAfterMs / 4));
  timer.unref();
  // Only the process's own close ends the supervision; the reopening above does not emit it.
  connection.once('close', () => {
    closed = true;
    clearInterval(timer);
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
