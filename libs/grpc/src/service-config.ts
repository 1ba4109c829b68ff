import { bool, int, oneOf, port, str } from '@ota/config';

/** METRICS_EVENT_LOOP_RESOLUTION_MS, which every service and the gateway read (runService passes it to ServiceMetrics). */
export function metricsEventLoopResolutionSetting() {
  return int('how often the event-loop lag of /metrics is sampled, ms; each sample wakes the process (at 10 ms an idle process spends about 6 ms of CPU a second on it), and a hold of the loop shorter than this is seen in proportion to its length', 50, 1);
}

/** Off by default: each operation's latency is measured from the pool anyway (libs/mongo). */
export function mongodbCommandMetricsSetting() {
  return bool('also measure each MongoDB command by name (latency and failures by command) for /metrics; each operation\'s latency and lost connections are measured either way; on costs the driver\'s per-command events and a second decoding of each answer (0.06 to 0.14 ms of CPU per command)', false);
}

/** Settings every gRPC service shares; each service adds its own. Defaults suit `npm start`. */
export function commonServiceSettings(defaults: { grpcPort: number; metricsPort: number; database: string }) {
  return {
    GRPC_PORT: port('port of the gRPC server', defaults.grpcPort),
    GRPC_HOST: str('address the gRPC server binds to', '0.0.0.0'),
    METRICS_PORT: port('port of the Prometheus /metrics endpoint', defaults.metricsPort),
    METRICS_HOST: str('address the /metrics endpoint binds to (all interfaces, so that a pod can be scraped)', '0.0.0.0'),
    METRICS_EVENT_LOOP_RESOLUTION_MS: metricsEventLoopResolutionSetting(),
    LOG_LEVEL: oneOf('pino log level', ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const, 'info'),
    MONGODB_URI: str('MongoDB connection string', 'mongodb://127.0.0.1:27017/'),
    MONGODB_DATABASE: str("name of this service's own database", defaults.database),
    MONGODB_COMMAND_METRICS: mongodbCommandMetricsSetting(),
    NATS_URL: str('NATS server URL(s), comma-separated', 'nats://127.0.0.1:4222'),
    GRPC_CALL_TIMEOUT_MS: int('deadline of an outgoing unary gRPC call', 5_000, 1),
    SHUTDOWN_GRACE_MS: int('how long in-flight calls may take to finish on SIGTERM', 10_000, 0),
  };
}
