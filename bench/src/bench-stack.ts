import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { loadConfig } from '@ota/config';
import { freePort, heapArgsOf, localStackSettings, startStack, type RunningStack } from '@ota/devstack';

/** How a stack differs from the default one: a change switched off, for a side-by-side comparison. */
export interface Variant {
  /** A checkout whose services (and local servers) run instead of this one's: another commit. */
  rootDir?: string;
  serviceEnv?: NodeJS.ProcessEnv;
  ferretdbArgs?: string[];
  serviceNodeArgs?: string[];
}

/** Changes that `--compare-without` can switch off, each measured against the same stack with it on. */
export const CHANGES: Record<string, { description: string; off: Variant }> = {
  'gin-mirror': {
    description: 'GIN indexes that serve FerretDB\'s own pushdown queries on PostgreSQL (deploy/ferretdb/gin_mirror.go)',
    off: { ferretdbArgs: ['--postgresql-gin-mirror-interval=0'] },
  },
  'load-shedding': {
    description: 'the device API concurrency limit with 503 and Retry-After (services/gateway/src/http/load-shedding.ts)',
    off: { serviceEnv: { DEVICE_API_MAX_CONCURRENCY: '1000000', DEVICE_API_MAX_QUEUED: '0' } },
  },
};

/** The whole stack on free loopback ports, as `npm start` runs it, with fresh data. */
export async function startBenchStack(rootDir: string, runId: string, variant: Variant = {}): Promise<RunningStack> {
  const dataDir = join(rootDir, '.data', 'bench', runId);
  return startStack({
    rootDir,
    dataDir,
    ports: 'random',
    output: { logDir: join(dataDir, 'logs') },
    env: process.env,
    databasePrefix: `bench_${runId}_`,
    ephemeral: true,
    mongoBackend: loadConfig({ LOCAL_MONGODB_BACKEND: localStackSettings.LOCAL_MONGODB_BACKEND }).LOCAL_MONGODB_BACKEND,
    serviceEnv: { LOG_LEVEL: 'warn', ...variant.serviceEnv },
    ferretdbArgs: variant.ferretdbArgs ?? [],
    serviceNodeArgs: variant.serviceNodeArgs ?? [],
  });
}

/** The pid of each process of the stack, by name, for CPU and memory readings. */
export function stackPids(stack: RunningStack): Record<string, number> {
  return Object.fromEntries(stack.processes.filter((managed) => managed.child.pid).map((managed) => [managed.name, managed.child.pid!]));
}

export interface BaselineServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts S0's bare node:http server against the stack's MongoDB-protocol server. */
export async function startBaseline(rootDir: string, stack: RunningStack, nodeArgs: string[] = []): Promise<BaselineServer> {
  const port = await freePort();
  // With the gateway's heap: it answers the check's HTTP request in its place.
  const child = await startBenchServer(rootDir, 'baseline-server.js', [], { MONGODB_URI: stack.mongodbUri, TOKEN_DATABASE: stack.gatewayEnv.MONGODB_DATABASE, PORT: String(port) }, [...heapArgsOf('gateway'), ...nodeArgs]);
  return { url: `http://127.0.0.1:${port}`, process: child, stop: () => stopBenchServer(child) };
}

export interface FloorServers {
  url: string;
  /** The Koa front and the grpc-js back, by name. */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

/** Starts S17's floor of our stack (floor-server.ts): a Koa front and a grpc-js back, against the stack's store. */
export async function startFloor(rootDir: string, stack: RunningStack, nodeArgs: string[] = []): Promise<FloorServers> {
  const [port, backPort] = [await freePort(), await freePort()];
  const env = { MONGODB_URI: stack.mongodbUri, TOKEN_DATABASE: stack.gatewayEnv.MONGODB_DATABASE };
  // Each with the heap of the service it stands for (libs/devstack/src/service-heaps.ts).
  const back = await startBenchServer(rootDir, 'floor-server.js', ['back'], { ...env, PORT: String(backPort) }, [...heapArgsOf('registry'), ...nodeArgs]);
  const front = await startBenchServer(rootDir, 'floor-server.js', ['front'], { ...env, PORT: String(port), BACK_PORT: String(backPort) }, [...heapArgsOf('gateway'), ...nodeArgs]).catch(async (error: unknown) => {
    await stopBenchServer(back);
    throw error;
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pids: { 'floor-front': front.pid!, 'floor-back': back.pid! },
    stop: async () => {
      await stopBenchServer(front);
      await stopBenchServer(back);
    },
  };
}

/** Runs one of the bench's own servers (`dist/<script>`) and waits for it to say it listens. */
async function startBenchServer(rootDir: string, script: string, args: string[], env: NodeJS.ProcessEnv, nodeArgs: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, join(rootDir, 'bench', 'dist', script), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`${script} ${args.join(' ')} exited with ${code}`)));
  });
  return child;
}

function stopBenchServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
