import { int, loadConfig, oneOf, port, str } from '@ota/config';

export const gatewaySettings = {
  GATEWAY_PORT: port('port of the HTTP API', 8080),
  GATEWAY_HOST: str('address the HTTP API binds to', '0.0.0.0'),
  METRICS_PORT: port('port of the Prometheus /metrics endpoint', 9100),
  LOG_LEVEL: oneOf('pino log level', ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const, 'info'),
  MONGODB_URI: str('MongoDB connection string', 'mongodb://127.0.0.1:27017/'),
  MONGODB_DATABASE: str("name of the gateway's own database (users, plans, tokens)", 'ota_gateway'),
  NATS_URL: str('NATS server URL(s), comma-separated', 'nats://127.0.0.1:4222'),
  REGISTRY_ADDR: str('address of the registry service', '127.0.0.1:50051'),
  ARTIFACTS_ADDR: str('address of the artifacts service', '127.0.0.1:50052'),
  ROLLOUT_ADDR: str('address of the rollout service', '127.0.0.1:50053'),
  TELEMETRY_ADDR: str('address of the telemetry service', '127.0.0.1:50054'),
  GRPC_CALL_TIMEOUT_MS: int('deadline of an outgoing unary gRPC call', 5_000, 1),
  GRPC_STREAM_TIMEOUT_MS: int('deadline of an upload or download stream', 3_600_000, 1),
  PUBLIC_BASE_URL: str('base URL devices reach the gateway at, for download URLs; empty: the request origin', ''),
  OTA_URL_SIGNING_KEY: str('secret that signs download URLs; set the same value on every gateway replica', 'local-development-only-signing-key'),
  OTA_URL_TTL_SECONDS: int('lifetime of a signed download URL', 900, 1),
  JSON_BODY_LIMIT_BYTES: int('largest JSON request body accepted', 64 * 1024, 1024),
  MANIFEST_LIMIT_BYTES: int('largest manifest form field accepted', 64 * 1024, 1024),
  DEFAULT_MAX_DEVICES: int("a new user's device cap across all projects (0: no cap)", 1_000, 0),
  DEFAULT_MAX_UPLOADS_PER_MONTH: int("a new user's artifact uploads per UTC month (0: no cap)", 100, 0),
  PLAN_CACHE_TTL_MS: int('how long the device check reuses an owner plan it read', 10_000, 0),
  SHUTDOWN_GRACE_MS: int('how long in-flight requests may take to finish on SIGTERM', 10_000, 0),
  DEVICE_API_MAX_CONCURRENCY: int('device API requests (check, status) one gateway serves at once; more wait', 64, 1),
  DEVICE_API_MAX_QUEUED: int('device API requests that may wait for a place; beyond it they get 503', 1_024, 0),
  DEVICE_API_MAX_WAIT_MS: int('how long a device API request may wait for a place before it gets 503', 250, 0),
  OVERLOAD_RETRY_AFTER_SECONDS: int('Retry-After of a 503 for overload, jittered to half to one and a half times this', 30, 1),
  CHECK_POLL_INTERVAL_SECONDS: int('poll_after_seconds suggested in every check answer, jittered the same way (0: no suggestion)', 1_800, 0),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
export const loadGatewayConfig = () => loadConfig(gatewaySettings);
