import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureListenerIsOurs, ensurePortsFree, lockDataDir, type PlannedPort } from './port-ownership';
import { startPostgres } from './postgres';
import { serviceArgsOf } from './service-heaps';
import { freePort, startProcess, waitForPort, type ManagedProcess, type OutputMode } from './processes';

export interface StackOptions {
  /** The repository root (where .tools/ and services/ are). */
  rootDir: string;
  /** Where local servers keep their data. */
  dataDir: string;
  /** `default`: the documented fixed ports (npm start). `random`: free ports (tests). */
  ports: 'default' | 'random';
  /** Ports of the local servers that override either mode (npm start's LOCAL_*_PORT settings). */
  serverPorts?: Partial<LocalServerPorts>;
  output: 'prefixed' | { logDir: string };
  /** MONGODB_URI, S3_ENDPOINT, NATS_URL (and S3 credentials) of servers that already run. */
  env: NodeJS.ProcessEnv;
  /** Prepended to every service's database name, so that test runs never share data. */
  databasePrefix: string;
  /** Extra settings passed to every service, e.g. LOG_LEVEL. */
  serviceEnv?: NodeJS.ProcessEnv;
  /** The gateway's port; with `ports: 'random'`, a free one is used when this is 0. */
  gatewayPort?: number;
  /** Which backend the local FerretDB runs on, when MONGODB_URI is not given. */
  mongoBackend?: 'postgresql' | 'sqlite';
  /** Delete the local servers' data when the stack stops (test stacks). */
  ephemeral?: boolean;
  /** More arguments for the local FerretDB (benchmarks switch its features off to compare). */
  ferretdbArgs?: string[];
  /** Node.js arguments for the services and the gateway, e.g. `--cpu-prof` for profiling (after each one's heap, which they may override: serviceArgsOf). */
  serviceNodeArgs?: string[];
}

export interface RunningStack {
  gatewayUrl: string;
  mongodbUri: string;
  /** The PostgreSQL cluster under the local FerretDB; empty when FerretDB runs on SQLite or MONGODB_URI is given. */
  postgresUrl: string;
  s3Endpoint: string;
  natsUrl: string;
  /** The environment the services run with (database names, addresses), for the admin command. */
  gatewayEnv: NodeJS.ProcessEnv;
  /** Each service's Prometheus endpoint, by service name. */
  metricsUrls: Record<string, string>;
  processes: ManagedProcess[];
  /** Kills a process of the stack (ferretdb, nats, s3rver, a service or the gateway) with SIGKILL. */
  kill(name: string): Promise<void>;
  /** Starts a killed process again on the same port with the same data, and waits for its port. */
  relaunch(name: string): Promise<void>;
  stop(): Promise<void>;
}

export interface LocalServerPorts {
  postgres: number;
  mongo: number;
  nats: number;
  s3: number;
}

const HOST = '127.0.0.1';
export const DEFAULT_SERVER_PORTS: LocalServerPorts = { postgres: 5433, mongo: 27017, nats: 4222, s3: 4569 };
const DEFAULT_PORTS = {
  ...DEFAULT_SERVER_PORTS,
  registry: 50051,
  artifacts: 50052,
  rollout: 50053,
  telemetry: 50054,
  gateway: 8080,
  metrics: { gateway: 9100, registry: 9101, artifacts: 9102, rollout: 9103, telemetry: 9104 },
};
const START_TIMEOUT_MS = 60_000;

/**
 * Starts whichever of FerretDB, s3rver and nats-server is not given by the environment, then the
 * four services and the gateway, and waits until the gateway is ready. Stops what it started, in
 * reverse order, if any step fails.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  mkdirSync(options.dataDir, { recursive: true });
  const releaseLock = lockDataDir(options.dataDir);
  const started: ManagedProcess[] = [];
  /** The port each process listens on, for relaunching it. */
  const portOf = new Map<string, PlannedPort>();
  const cleanups: Array<() => void> = [];
  const stop = async () => {
    for (const managed of [...started].reverse()) await managed.stop();
    if (options.ephemeral) for (const cleanup of cleanups) cleanup();
    releaseLock();
  };
  /** A data directory of a local server, deleted with an ephemeral stack (logs are kept). */
  const dataDirOf = (name: string) => {
    const dir = join(options.dataDir, name);
    mkdirSync(dir, { recursive: true });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };
  const outputOf = (name: string): OutputMode =>
    options.output === 'prefixed' ? { kind: 'prefixed' } : { kind: 'file', path: join(options.output.logDir, `${name}.log`) };
  if (options.output !== 'prefixed') mkdirSync(options.output.logDir, { recursive: true });
  const bin = (name: string) => {
    const path = join(options.rootDir, '.tools', 'bin', name);
    if (!existsSync(path)) {
      throw new Error(`${name} is not built (expected ${path}). Run "npm run build", or point the stack at a running server.`);
    }
    return path;
  };
  /** Waits until `managed` answers on its planned port, and makes sure it is really `managed` that answers. */
  const listening = async (managed: ManagedProcess, planned: PlannedPort) => {
    await waitForPort(HOST, planned.port, managed, START_TIMEOUT_MS);
    ensureListenerIsOurs(managed.child.pid!, planned);
  };

  try {
    // Every port is chosen, and checked to be free, before anything starts: a taken one is refused
    // with one line naming it, and nothing is left running.
    const planned: PlannedPort[] = [];
    const plan = async (owner: string, fixed: number, remedy: string, override?: number): Promise<PlannedPort> => {
      let chosen = override ?? (options.ports === 'default' ? fixed : await freePort());
      while (options.ports === 'random' && override === undefined && planned.some((other) => other.port === chosen)) chosen = await freePort();
      const entry = { owner, port: chosen, remedy };
      planned.push(entry);
      return entry;
    };
    const movable = (setting: string) => `set ${setting} to a free port (or LOCAL_STACK_PORTS=random for free ports throughout)`;
    const servicesRemedy = 'set LOCAL_STACK_PORTS=random to give the services free ports';
    const localMongo = !options.env.MONGODB_URI;
    const localPostgres = localMongo && (options.mongoBackend ?? 'postgresql') === 'postgresql';
    const servers = options.serverPorts ?? {};
    const postgresPort = localPostgres ? await plan('PostgreSQL', DEFAULT_PORTS.postgres, movable('LOCAL_POSTGRES_PORT'), servers.postgres) : undefined;
    const mongoPort = localMongo ? await plan('FerretDB', DEFAULT_PORTS.mongo, `${movable('LOCAL_FERRETDB_PORT')}, or point MONGODB_URI at that server on purpose`, servers.mongo) : undefined;
    const natsPort = options.env.NATS_URL ? undefined : await plan('nats-server', DEFAULT_PORTS.nats, `${movable('LOCAL_NATS_PORT')}, or point NATS_URL at that server on purpose`, servers.nats);
    const s3Port = options.env.S3_ENDPOINT ? undefined : await plan('s3rver', DEFAULT_PORTS.s3, movable('LOCAL_S3_PORT'), servers.s3);
    // Registry loads its check views from rollout and artifacts before it serves: it starts after them.
    const services = ['artifacts', 'telemetry', 'rollout', 'registry'] as const;
    const servicePorts = {} as Record<(typeof services)[number] | 'gateway', PlannedPort>;
    const metricsPorts = {} as Record<(typeof services)[number] | 'gateway', PlannedPort>;
    for (const name of services) servicePorts[name] = await plan(`the ${name} service`, DEFAULT_PORTS[name], servicesRemedy);
    servicePorts.gateway = await plan('the gateway', DEFAULT_PORTS.gateway, 'set GATEWAY_PORT to a free port', options.gatewayPort || undefined);
    for (const name of [...services, 'gateway'] as const) metricsPorts[name] = await plan(`the ${name} metrics endpoint`, DEFAULT_PORTS.metrics[name], servicesRemedy);
    await ensurePortsFree(HOST, planned);

    let mongodbUri = options.env.MONGODB_URI ?? '';
    let postgresUrl = '';
    if (mongoPort) {
      let backendArgs: string[];
      if (postgresPort) {
        const postgres = await startPostgres(join(options.dataDir, 'postgres'), HOST, postgresPort.port, outputOf('postgres'));
        started.push(postgres.process);
        cleanups.push(postgres.removeData);
        ensureListenerIsOurs(postgres.process.child.pid!, postgresPort);
        backendArgs = ['--postgresql-url', postgres.socketUrl];
        postgresUrl = postgres.url;
      } else {
        backendArgs = ['--sqlite-dir', `${dataDirOf('ferretdb')}/`];
      }
      const ferret = startProcess('ferretdb', bin('ferretdb'), ['--listen-addr', `${HOST}:${mongoPort.port}`, ...backendArgs, ...(options.ferretdbArgs ?? [])], process.env, outputOf('ferretdb'));
      started.push(ferret);
      portOf.set('ferretdb', mongoPort);
      await listening(ferret, mongoPort);
      mongodbUri = `mongodb://${HOST}:${mongoPort.port}/`;
    }

    let natsUrl = options.env.NATS_URL ?? '';
    if (natsPort) {
      const nats = startProcess('nats', bin('nats-server'), ['-a', HOST, '-p', String(natsPort.port), '-js', '-sd', dataDirOf('nats')], process.env, outputOf('nats'));
      started.push(nats);
      portOf.set('nats', natsPort);
      await listening(nats, natsPort);
      natsUrl = `nats://${HOST}:${natsPort.port}`;
    }

    let s3Endpoint = options.env.S3_ENDPOINT ?? '';
    let s3Credentials = { S3_ACCESS_KEY_ID: options.env.S3_ACCESS_KEY_ID ?? '', S3_SECRET_ACCESS_KEY: options.env.S3_SECRET_ACCESS_KEY ?? '' };
    if (s3Port) {
      const s3rverCli = require.resolve('s3rver/bin/s3rver.js');
      const s3 = startProcess('s3rver', process.execPath, [s3rverCli, '-d', dataDirOf('s3'), '-a', HOST, '-p', String(s3Port.port), '--silent'], process.env, outputOf('s3rver'));
      started.push(s3);
      portOf.set('s3rver', s3Port);
      await listening(s3, s3Port);
      s3Endpoint = `http://${HOST}:${s3Port.port}`;
      // s3rver accepts only its own fixed credentials.
      s3Credentials = { S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' };
    }

    // Settings the caller gave (S3_BUCKET, OTA_URL_SIGNING_KEY, ...) reach every service; the
    // addresses and database names of this stack take precedence.
    const shared: NodeJS.ProcessEnv = {
      // A local stack may sign and seal with the development secrets that are in the source.
      ALLOW_DEVELOPMENT_SECRETS: 'true',
      ...options.env,
      MONGODB_URI: mongodbUri,
      NATS_URL: natsUrl,
      REGISTRY_ADDR: `${HOST}:${servicePorts.registry.port}`,
      ARTIFACTS_ADDR: `${HOST}:${servicePorts.artifacts.port}`,
      ROLLOUT_ADDR: `${HOST}:${servicePorts.rollout.port}`,
      TELEMETRY_ADDR: `${HOST}:${servicePorts.telemetry.port}`,
      ...options.serviceEnv,
    };
    let gatewayEnv: NodeJS.ProcessEnv = {};
    const metricsUrls: Record<string, string> = {};
    for (const name of [...services, 'gateway'] as const) {
      metricsUrls[name] = `http://${HOST}:${metricsPorts[name].port}/metrics`;
      const env: NodeJS.ProcessEnv = {
        ...shared,
        MONGODB_DATABASE: `${options.databasePrefix}${name}`,
        METRICS_PORT: String(metricsPorts[name].port),
        // Loopback, like every port of the local stack: nothing outside this machine scrapes it.
        METRICS_HOST: HOST,
      };
      if (name === 'gateway') {
        env.GATEWAY_PORT = String(servicePorts.gateway.port);
        env.GATEWAY_HOST = HOST;
        gatewayEnv = env;
      } else {
        env.GRPC_PORT = String(servicePorts[name].port);
        env.GRPC_HOST = HOST;
      }
      // The gateway reads the store too when it presigns download URLs (DOWNLOAD_URLS=presigned).
      if (name === 'artifacts' || name === 'gateway') Object.assign(env, s3Credentials, { S3_ENDPOINT: s3Endpoint });
      // The patch workers run the detools that the build installed, unless the caller named one.
      const localDetools = join(options.rootDir, '.tools', 'detools-venv', 'bin', 'detools');
      if (name === 'artifacts' && !env.DETOOLS_COMMAND && existsSync(localDetools)) env.DETOOLS_COMMAND = localDetools;
      const managed = startProcess(name, process.execPath, serviceArgsOf(options.rootDir, name, options.serviceNodeArgs), env, outputOf(name));
      started.push(managed);
      portOf.set(name, servicePorts[name]);
      await listening(managed, servicePorts[name]);
    }

    const gatewayUrl = `http://${HOST}:${servicePorts.gateway.port}`;
    await waitForReady(gatewayUrl, started.at(-1)!);
    const processNamed = (name: string) => {
      const index = started.findIndex((managed) => managed.name === name);
      if (index < 0) throw new Error(`this stack did not start ${name}`);
      return index;
    };
    return {
      gatewayUrl,
      mongodbUri,
      postgresUrl,
      s3Endpoint,
      natsUrl,
      gatewayEnv,
      metricsUrls,
      processes: started,
      kill: (name) => started[processNamed(name)]!.kill(),
      async relaunch(name) {
        const index = processNamed(name);
        const relaunched = started[index]!.relaunch();
        started[index] = relaunched;
        await listening(relaunched, portOf.get(name)!);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForReady(gatewayUrl: string, gateway: ManagedProcess): Promise<void> {
  const giveUpAt = Date.now() + START_TIMEOUT_MS;
  let last = '';
  while (Date.now() < giveUpAt) {
    if (gateway.child.exitCode !== null) throw new Error(`gateway exited during start:\n${gateway.recentOutput()}`);
    try {
      const response = await fetch(`${gatewayUrl}/readyz`);
      if (response.ok) return;
      last = await response.text();
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`the gateway did not become ready: ${last}`);
}
