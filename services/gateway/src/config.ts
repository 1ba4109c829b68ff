import { bool, int, loadConfig, oneOf, port, refuseDevelopmentSecret, s3ConnectionSettings, str } from '@ota/config';
import { metricsEventLoopResolutionSetting, mongodbCommandMetricsSetting } from '@ota/grpc';

/** The URL signing key of a local stack: in the source, so never a secret. */
const DEVELOPMENT_SIGNING_KEY = 'local-development-only-signing-key';

export const gatewaySettings = {
  GATEWAY_PORT: port('port of the HTTP API', 8080),
  GATEWAY_HOST: str('address the HTTP API binds to', '0.0.0.0'),
  METRICS_PORT: port('port of the Prometheus /metrics endpoint', 9100),
  METRICS_HOST: str('address the /metrics endpoint binds to (all interfaces, so that a pod can be scraped)', '0.0.0.0'),
  METRICS_EVENT_LOOP_RESOLUTION_MS: metricsEventLoopResolutionSetting(),
  LOG_LEVEL: oneOf('pino log level', ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const, 'info'),
  MONGODB_URI: str('MongoDB connection string', 'mongodb://127.0.0.1:27017/'),
  MONGODB_DATABASE: str("name of the gateway's own database (users, plans, tokens)", 'ota_gateway'),
  MONGODB_COMMAND_METRICS: mongodbCommandMetricsSetting(),
  NATS_URL: str('NATS server URL(s), comma-separated', 'nats://127.0.0.1:4222'),
  REGISTRY_ADDR: str('address of the registry service', '127.0.0.1:50051'),
  ARTIFACTS_ADDR: str('address of the artifacts service', '127.0.0.1:50052'),
  ROLLOUT_ADDR: str('address of the rollout service', '127.0.0.1:50053'),
  TELEMETRY_ADDR: str('address of the telemetry service', '127.0.0.1:50054'),
  GRPC_CALL_TIMEOUT_MS: int('deadline of an outgoing unary gRPC call', 5_000, 1),
  GRPC_STREAM_TIMEOUT_MS: int('deadline of an upload or download stream', 3_600_000, 1),
  PREVIEW_TIMEOUT_MS: int("deadline of a deployment preview, which reads the project's whole fleet (in place of REQUEST_TIMEOUT_MS); past it the preview is 503 with Retry-After", 60_000, 1_000),
  PUBLIC_BASE_URL: str("base URL devices reach the gateway at, for download URLs; empty: the request's own origin (its Host, or a trusted proxy's X-Forwarded-Host)", ''),
  TRUSTED_PROXIES: str('addresses and CIDR ranges of the proxies whose X-Forwarded-* and Forwarded headers are believed, comma-separated; empty: nobody\'s', ''),
  OTA_URL_SIGNING_KEY: str('secret that signs download URLs; set the same value on every gateway replica (its default is for a local stack only: see ALLOW_DEVELOPMENT_SECRETS)', DEVELOPMENT_SIGNING_KEY),
  ALLOW_DEVELOPMENT_SECRETS: bool('start with OTA_URL_SIGNING_KEY left at its development default; the local stack sets it, and without it the gateway refuses to start with that default', false),
  OTA_URL_TTL_SECONDS: int('lifetime of a signed download URL', 900, 1),
  DOWNLOAD_URLS: oneOf(
    "where an offer's download URL points: `gateway`, this gateway's signed streaming endpoint; `presigned`, a presigned GET of the build in S3_BUCKET, so that object storage (or a CDN in front of it) serves the bytes, ranges included. Both expire after OTA_URL_TTL_SECONDS",
    ['gateway', 'presigned'] as const,
    'gateway',
  ),
  S3_PUBLIC_ENDPOINT: str('S3 endpoint devices reach, for presigned download URLs; empty: S3_ENDPOINT', ''),
  PRESIGNED_URL_MAX_CHARS: int(
    "longest presigned download URL handed to a device; a longer one (temporary S3 credentials add a session token of about a kilobyte) is replaced by the gateway's own URL, with a warning, since the device SDK holds 640 characters (0: no limit)",
    600,
    0,
  ),
  ...s3ConnectionSettings,
  JSON_BODY_LIMIT_BYTES: int('largest JSON request body accepted', 64 * 1024, 1024),
  MANIFEST_LIMIT_BYTES: int('largest manifest form field accepted', 64 * 1024, 1024),
  ELF_MAX_BYTES: int("largest ELF a build's upload may have (PUT .../elf/); larger is 413. The artifacts service has its own setting of the same name", 256 * 1024 * 1024, 1),
  SBOM_MAX_BYTES: int("largest SBOM document a build may be given (PUT .../sbom/); larger is 413. At most 7 MiB: it travels to the artifacts service in one message", 4 * 1024 * 1024, 1, 7 * 1024 * 1024),
  COREDUMP_MAX_BYTES: int('largest core dump a device may send (413 past it); the artifacts service has its own setting of the same name', 1024 * 1024, 1024),
  COREDUMP_PIECE_MAX_BYTES: int('largest piece of a core dump one request may carry (413 past it)', 64 * 1024, 512),
  COREDUMP_MAX_PER_DEVICE_PER_HOUR: int('new core dumps one device may start sending per hour (429 past it); 0: no limit', 4, 0),
  DEFAULT_MAX_DEVICES: int("a new user's device cap across all projects (0: no cap)", 1_000, 0),
  DEFAULT_MAX_UPLOADS_PER_MONTH: int("a new user's artifact uploads per UTC month (0: no cap)", 100, 0),
  PLAN_CACHE_TTL_MS: int("how long the device check reuses an owner plan it read; set-plan clears it on every replica at once over NATS, so this bounds only a change that could not be announced", 10_000, 0),
  PERSONAL_TOKEN_TTL_DAYS: int('how long a new personal token lasts unless its maker names another expiry (expires_at); 0: new personal tokens do not expire unless asked to', 90, 0),
  SESSION_TTL_SECONDS: int('lifetime of a console session from sign-in; revoking its token or signing out ends it sooner', 43_200, 60),
  OIDC_ISSUER: str('single sign-on: the OpenID provider\'s issuer URL (its discovery document is read from <issuer>/.well-known/openid-configuration); empty: no single sign-on, personal tokens only', ''),
  OIDC_CLIENT_ID: str("single sign-on: this gateway's client id at the provider", ''),
  OIDC_CLIENT_SECRET: str("single sign-on: the client's secret (a confidential client; PKCE is used as well)", ''),
  OIDC_SCOPES: str('single sign-on: the scopes asked for; openid and email are needed, and offline access is not', 'openid email profile'),
  OIDC_GROUPS_CLAIM: str("single sign-on: the ID token claim that lists the person's groups, to which roles may be granted", 'groups'),
  OIDC_REDIRECT_URL: str("single sign-on: where the provider sends the browser back; register it at the provider. Empty: the request's own origin + /api/v1/session/sso/callback", ''),
  OIDC_CONFIRM_SECONDS: int('single sign-on: how long a session acts before it asks the provider again whether the person may still sign in; a person removed or disabled there loses access within it', 300, 10),
  CONSOLE_DIR: str('directory of the built web console served under /console/; empty: the @ota/console package built beside the gateway', ''),
  SHUTDOWN_GRACE_MS: int('how long in-flight requests may take to finish on SIGTERM', 10_000, 0),
  DEVICE_API_MAX_CONCURRENCY: int('device API requests (check, status) one gateway serves at once; more wait', 64, 1),
  DEVICE_API_MAX_QUEUED: int('device API requests that may wait for a place; beyond it they get 503', 1_024, 0),
  DEVICE_API_MAX_WAIT_MS: int('how long a device API request may wait for a place before it gets 503', 250, 0),
  OVERLOAD_RETRY_AFTER_SECONDS: int('Retry-After of a 503 for overload, jittered to half to one and a half times this', 30, 1),
  HTTP_HEADERS_TIMEOUT_MS: int("how long a client may take to send a request's headers before it gets 408 and the connection is closed", 10_000, 1_000),
  HTTP_REQUEST_TIMEOUT_MS: int('how long a client may take to send a whole request, body included (an upload over a slow link), before it gets 408', 600_000, 1_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int("how long an idle keep-alive connection stays open; a little over a typical load balancer's idle timeout, so that the balancer closes it first", 65_000, 1_000),
  IDEMPOTENCY_KEY_TTL_SECONDS: int('how long an upload or release answered for an Idempotency-Key is kept to answer a retry with the same key (at least a day: retries of a pipeline come within it)', 86_400, 86_400),
  PATCH_BASES_PER_BUILD: int("how many of the most-run images the project's devices report a started deployment's build gets delta patches from; 0 asks for none ahead of the devices' checks", 3, 0),
  PATCH_OFFER_WAIT_SECONDS: int('how long after a delta patch was asked for a device that applies patches is told to check again for it rather than offered the whole build; 0 never waits', 60, 0),
  REQUEST_TIMEOUT_MS: int('longest a request (other than an upload or a download) may take before it is answered 503 with Retry-After', 10_000, 100),
  AUDIT_OUTBOX_RELAY_INTERVAL_MS: int('how often audit events kept while NATS was away are moved to JetStream', 2_000, 100),
  RATE_LIMIT_DEVELOPER_PER_SECOND: int('requests per second one personal or api-scope token may make, per gateway replica (0: no limit)', 20, 0),
  RATE_LIMIT_DEVELOPER_BURST: int('requests such a token may make at once above its rate', 200, 1),
  RATE_LIMIT_DEVICE_TOKEN_PER_SECOND: int('requests per second one per-device token may make, per gateway replica (0: no limit)', 2, 0),
  RATE_LIMIT_DEVICE_TOKEN_BURST: int('requests a per-device token may make at once above its rate', 30, 1),
  RATE_LIMIT_FLEET_TOKEN_PER_SECOND: int('requests per second one device-scope project token (shared by a fleet) may make, per gateway replica (0: no limit)', 0, 0),
  RATE_LIMIT_FLEET_TOKEN_BURST: int('requests a device-scope project token may make at once above its rate', 1_000, 1),
  CHECK_POLL_INTERVAL_SECONDS: int('poll_after_seconds suggested in every check answer, jittered the same way (0: no suggestion)', 1_800, 0),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
export const loadGatewayConfig = () => loadConfig(gatewaySettings);

/** The configuration of a gateway that serves: the migrations and the admin command sign nothing, and take any key. */
export const loadServingGatewayConfig = () => {
  const config = loadGatewayConfig();
  refuseDevelopmentSecret('OTA_URL_SIGNING_KEY', config.OTA_URL_SIGNING_KEY, DEVELOPMENT_SIGNING_KEY, config.ALLOW_DEVELOPMENT_SECRETS);
  if (config.OIDC_ISSUER && (!config.OIDC_CLIENT_ID || !config.OIDC_CLIENT_SECRET)) {
    throw new Error('OIDC_ISSUER is set without OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: single sign-on needs the client registered at the provider');
  }
  return config;
};
