import { join } from 'node:path';
import { freePort, serviceArgsOf, startProcess, startStack, throwawayStack, waitForPort, type ManagedProcess, type RunningStack } from '@ota/devstack';

const HOST = '127.0.0.1';

/** The processes a fault can hit, by the names the stack gives them. */
export const SERVICES = ['registry', 'artifacts', 'rollout', 'telemetry', 'gateway'] as const;

export interface FaultStack {
  stack: RunningStack;
  /**
   * Two gateways: the stack's own, and a second one whose calls go to a second registry replica,
   * which confirms its offers with a second rollout replica (`gateway-2`, `registry-2`,
   * `rollout-2`). Comparing their answers shows whether the two replicas' in-memory views agree.
   */
  gatewayUrls: [string, string];
  logDir: string;
  /** The database of a service, for reading what it stored. */
  databaseOf(service: string): string;
  kill(name: string): Promise<void>;
  relaunch(name: string): Promise<void>;
  /** The pid of every running process by name: a process that was not relaunched keeps its pid. */
  pids(): Map<string, number | undefined>;
  stop(): Promise<void>;
}

/**
 * A stack of its own for the fault suite (it kills processes, so it cannot share the test run's
 * stack), on free ports with fresh data, with the shipped defaults except where `serviceEnv` says.
 */
export async function startFaultStack(rootDir: string, serviceEnv: NodeJS.ProcessEnv = {}): Promise<FaultStack> {
  const { logDir, options } = throwawayStack(rootDir, 'faults', { LOG_LEVEL: 'info', ...serviceEnv });
  const databasePrefix = options.databasePrefix;
  const stack = await startStack(options);

  const extras = new Map<string, { process: ManagedProcess; port: number }>();
  try {
    const rolloutPort = await freePort();
    const rolloutEnv: NodeJS.ProcessEnv = {
      ...stack.gatewayEnv,
      MONGODB_DATABASE: `${databasePrefix}rollout`,
      GRPC_HOST: HOST,
      GRPC_PORT: String(rolloutPort),
      METRICS_PORT: String(await freePort()),
      // Longer than the whole suite: what this replica learns, it learns over NATS or on reconnect.
      VIEW_RELOAD_INTERVAL_MS: '3600000',
    };
    const rollout2 = startProcess('rollout-2', process.execPath, serviceArgsOf(rootDir, 'rollout'), rolloutEnv, { kind: 'file', path: join(logDir, 'rollout-2.log') });
    extras.set('rollout-2', { process: rollout2, port: rolloutPort });
    await waitForPort(HOST, rolloutPort, rollout2, 60_000);

    const registryPort = await freePort();
    const registryEnv: NodeJS.ProcessEnv = {
      ...stack.gatewayEnv,
      MONGODB_DATABASE: `${databasePrefix}registry`,
      GRPC_HOST: HOST,
      GRPC_PORT: String(registryPort),
      METRICS_PORT: String(await freePort()),
      ROLLOUT_ADDR: `${HOST}:${rolloutPort}`,
      // As for rollout-2: what this replica's check views learn, they learn over NATS or on reconnect.
      VIEW_RELOAD_INTERVAL_MS: '3600000',
    };
    const registry2 = startProcess('registry-2', process.execPath, serviceArgsOf(rootDir, 'registry'), registryEnv, { kind: 'file', path: join(logDir, 'registry-2.log') });
    extras.set('registry-2', { process: registry2, port: registryPort });
    await waitForPort(HOST, registryPort, registry2, 90_000);

    const gatewayPort = await freePort();
    const gatewayEnv: NodeJS.ProcessEnv = {
      ...stack.gatewayEnv,
      GATEWAY_PORT: String(gatewayPort),
      METRICS_PORT: String(await freePort()),
      REGISTRY_ADDR: `${HOST}:${registryPort}`,
      ROLLOUT_ADDR: `${HOST}:${rolloutPort}`,
    };
    const gateway2 = startProcess('gateway-2', process.execPath, serviceArgsOf(rootDir, 'gateway'), gatewayEnv, { kind: 'file', path: join(logDir, 'gateway-2.log') });
    extras.set('gateway-2', { process: gateway2, port: gatewayPort });
    await waitForPort(HOST, gatewayPort, gateway2, 60_000);
  } catch (error) {
    for (const extra of extras.values()) await extra.process.stop();
    await stack.stop();
    throw error;
  }

  const processes = () => [...stack.processes, ...[...extras.values()].map((extra) => extra.process)];
  return {
    stack,
    gatewayUrls: [stack.gatewayUrl, `http://${HOST}:${extras.get('gateway-2')!.port}`],
    logDir,
    databaseOf: (service) => `${databasePrefix}${service}`,
    async kill(name) {
      const extra = extras.get(name);
      await (extra ? extra.process.kill() : stack.kill(name));
    },
    async relaunch(name) {
      const extra = extras.get(name);
      if (!extra) return stack.relaunch(name);
      extra.process = extra.process.relaunch();
      await waitForPort(HOST, extra.port, extra.process, 60_000);
    },
    pids: () => new Map(processes().map((managed) => [managed.name, managed.child.exitCode === null && managed.child.signalCode === null ? managed.child.pid : undefined])),
    async stop() {
      for (const extra of extras.values()) await extra.process.stop();
      await stack.stop();
    },
  };
}
