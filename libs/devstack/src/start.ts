// `npm start`: the whole system on this machine, in the foreground, until Ctrl-C.
import { join, resolve } from 'node:path';
import { loadConfig } from '@ota/config';
import { localStackSettings } from './start-settings';
import { startStack, type RunningStack } from './stack';

const rootDir = join(__dirname, '..', '..', '..');


/** What `npm run admin` reads: the gateway's database, and NATS to tell the gateways of a new plan. */
const ADMIN_SETTINGS = ['MONGODB_URI', 'MONGODB_DATABASE', 'NATS_URL'] as const;

/** `text` as one word of a POSIX shell. */
function shellQuoted(text: string): string {
  return /^[A-Za-z0-9_./:@,+=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'"'"'`)}'`;
}

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
  // The admin command talks to the gateway's database and to NATS: the banner names where they
  // are, so that its commands work as printed whatever ports the stack took.
  const adminEnv = ADMIN_SETTINGS.map((key) => `${key}=${shellQuoted(stack!.gatewayEnv[key] ?? '')}`).join(' ');
  process.stdout.write(
    `\nThe gateway is ready at ${stack.gatewayUrl}\n` +
      `The console:    ${stack.gatewayUrl}/console/ (sign in with a personal token)\n` +
      `Create a user:  ${adminEnv} npm run --silent admin -- create-user --email you@example.com\n` +
      `Set a plan:     ${adminEnv} npm run --silent admin -- set-plan --email you@example.com --max-devices 1000\n` +
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
