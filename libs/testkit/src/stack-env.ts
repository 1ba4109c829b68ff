import type { RunningStack } from '@ota/devstack';

/**
 * The running test stack, as the global setup published it in the environment: the addresses of
 * the dev stack it started (JSON carries the data, not the stack's methods), and what the tests add.
 */
export interface TestStack extends Pick<RunningStack, 'gatewayUrl' | 'mongodbUri' | 'postgresUrl' | 's3Endpoint' | 'natsUrl' | 'gatewayEnv' | 'metricsUrls'> {
  /** Where every process of the stack writes its log. */
  logDir: string;
  /** Every raw token handed to a test, one per line: the end of the run looks for them in the logs. */
  issuedTokensFile: string;
}

export const STACK_ENV_KEY = 'OTA_TEST_STACK';

export function testStack(): TestStack {
  const raw = process.env[STACK_ENV_KEY];
  if (!raw) {
    throw new Error(
      'The test stack is not running. Run the tests with `npm test`: its global setup starts FerretDB, ' +
        's3rver, nats-server (or uses MONGODB_URI, S3_ENDPOINT, NATS_URL) and every service.',
    );
  }
  return JSON.parse(raw) as TestStack;
}
