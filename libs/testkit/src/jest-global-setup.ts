import { join } from 'node:path';
import { startStack, throwawayStack, type RunningStack } from '@ota/devstack';
import { STACK_ENV_KEY, type TestStack } from './stack-env';

const rootDir = join(__dirname, '..', '..', '..');

/**
 * Jest global setup: one real stack for the whole run. Servers named by MONGODB_URI, S3_ENDPOINT
 * or NATS_URL are used as they are; the others are started on free loopback ports with fresh data.
 * A server that cannot start fails the run with its name and output; no test is skipped.
 */
export default async function globalSetup(): Promise<void> {
  const { dataDir, logDir, options } = throwawayStack(rootDir, 'test', {
    // Debug level, so that the log scan at the end (jest-global-teardown) covers every line a
    // service can write. The per-device token limit is raised because the security tests call
    // every operation with one device token; the limit itself is tested on a gateway of its own.
    LOG_LEVEL: 'debug',
    VIEW_RELOAD_INTERVAL_MS: '5000',
    // Deployments judge their guardrails and ramp their stages within a second, for the guardrail tests.
    SUPERVISE_INTERVAL_MS: '500',
    // Registry sends the device health its checks counted every half second, for the health guardrail's test.
    HEALTH_FLUSH_MS: '500',
    // A device's health counts at most the time since its previous report: the fleet simulator's
    // health test runs an hour of a device's life in about a second.
    HEALTH_TIME_SCALE: '3600',
    // Webhook receivers in the tests listen on 127.0.0.1, and their retries come within seconds.
    WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // A bulk membership change a registry replica left is taken over within seconds, for its test.
    MEMBERSHIP_CHANGE_LEASE_MS: '4000',
    WEBHOOK_RETRY_BASE_MS: '200',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    RATE_LIMIT_DEVICE_TOKEN_PER_SECOND: '100',
    RATE_LIMIT_DEVICE_TOKEN_BURST: '1000',
  });
  const stack = await startStack(options);
  const published: TestStack = {
    gatewayUrl: stack.gatewayUrl,
    mongodbUri: stack.mongodbUri,
    postgresUrl: stack.postgresUrl,
    s3Endpoint: stack.s3Endpoint,
    natsUrl: stack.natsUrl,
    gatewayEnv: stack.gatewayEnv,
    metricsUrls: stack.metricsUrls,
    logDir,
    issuedTokensFile: join(dataDir, 'issued-tokens.txt'),
  };
  process.env[STACK_ENV_KEY] = JSON.stringify(published);
  process.stderr.write(`\n[test stack] gateway ${stack.gatewayUrl}; logs in ${logDir}\n`);
  (globalThis as { otaTestStack?: { stack: RunningStack; dataDir: string } }).otaTestStack = { stack, dataDir };
}
