// `npm start`: the whole system on this machine, in the foreground, until Ctrl-C.
import { join, resolve } from 'node:path';
import { loadConfig } from '@ota/config';
import { localStackSettings } from './start-settings';
import { startStack, type RunningStack } from './stack';

const rootDir = join(__dirname, '..', '..', '..');


async function main(): Promise<void> {
  let stack: RunningStack | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping every process this command started...\n`);
    await stack?.stop();
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));

  const config = loadConfig(localStackSettings);
  stack = await startStack({
    rootDir,
    dataDir: resolve(rootDir, config.LOCAL_STACK_DATA_DIR),
    ports: config.LOCAL_STACK_PORTS,
    serverPorts:
      config.LOCAL_STACK_PORTS === 'default'
        ? { postgres: config.LOCAL_POSTGRES_PORT, mongo: config.LOCAL_FERRETDB_PORT, nats: config.LOCAL_NATS_PORT, s3: config.LOCAL_S3_PORT }
        : {},
    gatewayPort: config.GATEWAY_PORT,
    mongoBackend: config.LOCAL_MONGODB_BACKEND,
    output: 'prefixed',
    env: process.env,
    databasePrefix: 'ota_',
    serviceEnv: { LOG_LEVEL: config.LOG_LEVEL },
  });
  process.stdout.write(
    `\nThe gateway is ready at ${stack.gatewayUrl}\n` +
      `The console:    ${stack.gatewayUrl}/console/ (sign in with a personal token)\n` +
      `Create a user:  npm run --silent admin -- create-user --email you@example.com\n` +
      `Stop:           Ctrl-C\n\n`,
  );
  // If any process dies, stop the rest: a half-running stack only confuses.
  for (const managed of stack.processes) {
    managed.child.once('exit', (code) => {
      if (!stopping) {
        process.stderr.write(`${managed.name} exited (code ${code}); stopping everything\n`);
        void stop('exit');
      }
    });
  }
}

main().catch((error: Error) => {
  // A taken port or a running stack is one line a person can act on; anything else keeps its detail.
  process.stderr.write(`npm start failed: ${error.message}\n`);
  process.exit(1);
});
