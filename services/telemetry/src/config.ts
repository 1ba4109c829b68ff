import { bool, int, loadConfig, refuseDevelopmentSecret, str } from '@ota/config';

/** The webhook secret key of a local stack: in the source, so never a secret. */
const DEVELOPMENT_SECRET_KEYS = 'local:local-development-only-webhook-secret-key';
import { commonServiceSettings } from '@ota/grpc';

export const telemetrySettings = {
  ...commonServiceSettings({ grpcPort: 50054, metricsPort: 9104, database: 'ota_telemetry' }),
  WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: bool('allow webhook URLs that are or resolve to loopback, link-local or private addresses (receivers inside the cluster)', false),
  WEBHOOK_SECRET_KEYS: str('keys that seal webhook secrets at rest, <id>:<at least 32 characters> comma-separated; the first seals, every one opens (docs/operations.md, "Rotating the webhook secret key"); the chart generates one (its default is for a local stack only: see ALLOW_DEVELOPMENT_SECRETS)', DEVELOPMENT_SECRET_KEYS),
  ALLOW_DEVELOPMENT_SECRETS: bool('start with WEBHOOK_SECRET_KEYS left at its development default; the local stack sets it, and without it telemetry refuses to start with that default', false),
  WEBHOOK_TIMEOUT_MS: int('how long one webhook delivery attempt waits for the receiver to answer', 10_000, 100),
  WEBHOOK_RETRY_BASE_MS: int('wait after the first failed webhook attempt; it doubles with each failure', 10_000, 10),
  WEBHOOK_RETRY_MAX_DELAY_MS: int('longest wait between two webhook attempts', 3_600_000, 10),
  WEBHOOK_RETRY_WINDOW_MS: int('how long after its event a webhook delivery is retried before it is given up', 86_400_000, 1_000),
  WEBHOOK_CONCURRENCY: int('webhook deliveries each telemetry replica attempts at once', 8, 1),
  WEBHOOK_POLL_INTERVAL_MS: int("the longest each telemetry replica goes without looking for webhook deliveries due (it also looks at the first pending one's due time)", 30_000, 50),
};

export type TelemetryConfig = ReturnType<typeof loadTelemetryConfig>;
export const loadTelemetryConfig = () => loadConfig(telemetrySettings);

/** The configuration of a telemetry service that serves: its migrations seal nothing, and take any key. */
export const loadServingTelemetryConfig = () => {
  const config = loadTelemetryConfig();
  refuseDevelopmentSecret('WEBHOOK_SECRET_KEYS', config.WEBHOOK_SECRET_KEYS, DEVELOPMENT_SECRET_KEYS, config.ALLOW_DEVELOPMENT_SECRETS);
  return config;
};
