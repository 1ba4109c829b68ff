import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

// Buckets sized for a service whose hot path should answer in single-digit milliseconds.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The metrics of one process. gRPC metric names follow go-grpc-prometheus, so the dashboards and
 * alerts written for Go services work unchanged.
 */
export class ServiceMetrics {
  readonly registry = new Registry();

  readonly grpcServerStarted = new Counter({
    name: 'grpc_server_started_total',
    help: 'RPCs started on the server.',
    labelNames: ['grpc_type', 'grpc_service', 'grpc_method'] as const,
    registers: [this.registry],
  });
  readonly grpcServerHandled = new Counter({
    name: 'grpc_server_handled_total',
    help: 'RPCs completed on the server, by status code.',
    labelNames: ['grpc_type', 'grpc_service', 'grpc_method', 'grpc_code'] as const,
    registers: [this.registry],
  });
  readonly grpcServerHandling = new Histogram({
    name: 'grpc_server_handling_seconds',
    help: 'Time the server took to complete an RPC.',
    labelNames: ['grpc_type', 'grpc_service', 'grpc_method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly grpcClientHandled = new Counter({
    name: 'grpc_client_handled_total',
    help: 'RPCs completed by the client, by status code.',
    labelNames: ['grpc_type', 'grpc_service', 'grpc_method', 'grpc_code'] as const,
    registers: [this.registry],
  });
  readonly grpcClientHandling = new Histogram({
    name: 'grpc_client_handling_seconds',
    help: 'Time from the client starting an RPC to its completion.',
    labelNames: ['grpc_type', 'grpc_service', 'grpc_method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests completed, by route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency, by route.',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly shedRequests = new Counter({
    name: 'http_requests_shed_total',
    help: 'Requests refused with 503 because the process was at its concurrency limit.',
    registers: [this.registry],
  });

  readonly rateLimitedRequests = new Counter({
    name: 'http_requests_rate_limited_total',
    help: 'Requests refused with 429 because their token was over its rate limit, by token kind.',
    labelNames: ['token_kind'] as const,
    registers: [this.registry],
  });
  readonly timedOutRequests = new Counter({
    name: 'http_requests_timed_out_total',
    help: 'Requests answered 503 because they did not complete within REQUEST_TIMEOUT_MS.',
    registers: [this.registry],
  });
  readonly auditOutboxWritten = new Counter({
    name: 'audit_outbox_written_total',
    help: 'Audit events kept in the outbox because JetStream could not store them at once.',
    registers: [this.registry],
  });
  readonly auditOutboxRelayed = new Counter({
    name: 'audit_outbox_relayed_total',
    help: 'Audit events moved from the outbox to JetStream.',
    registers: [this.registry],
  });

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
  }
}

/** Serves GET /metrics for one registry on its own port; resolves once listening. */
export async function startMetricsServer(registry: Registry, port: number, host = '0.0.0.0'): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (error: Error) => res.writeHead(500).end(error.message),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export function boundPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}
