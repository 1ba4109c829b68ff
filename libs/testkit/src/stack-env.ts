/** The running test stack, as the global setup published it in the environment. */
export interface TestStack {
  gatewayUrl: string;
  mongodbUri: string;
  /** The PostgreSQL cluster under the local FerretDB, or empty (SQLite backend, or MONGODB_URI given). */
  postgresUrl: string;
  s3Endpoint: string;
  natsUrl: string;
  /** The gateway's own environment: what the admin command needs to reach the same database. */
  gatewayEnv: NodeJS.ProcessEnv;
  /** Each service's Prometheus endpoint, by service name. */
  metricsUrls: Record<string, string>;
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
