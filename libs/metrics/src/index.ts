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

  readonly grpcServerStarted = this.counter('grpc_server_started_total', 'RPCs started on the server.', ['grpc_type', 'grpc_service', 'grpc_method']);
  readonly grpcServerHandled = this.counter('grpc_server_handled_total', 'RPCs completed on the server, by status code.', ['grpc_type', 'grpc_service', 'grpc_method', 'grpc_code']);
  readonly grpcServerHandling = this.latency('grpc_server_handling_seconds', 'Time the server took to complete an RPC.', ['grpc_type', 'grpc_service', 'grpc_method']);
  readonly grpcClientHandled = this.counter('grpc_client_handled_total', 'RPCs completed by the client, by status code.', ['grpc_type', 'grpc_service', 'grpc_method', 'grpc_code']);
  readonly grpcClientHandling = this.latency('grpc_client_handling_seconds', 'Time from the client starting an RPC to its completion.', ['grpc_type', 'grpc_service', 'grpc_method']);
  readonly httpRequests = this.counter('http_requests_total', 'HTTP requests completed, by route and status.', ['method', 'route', 'status']);
  readonly httpDuration = this.latency('http_request_duration_seconds', 'HTTP request latency, by route.', ['method', 'route']);
  readonly shedRequests = this.counter('http_requests_shed_total', 'Requests refused with 503 because the process was at its concurrency limit.', []);
  readonly rateLimitedRequests = this.counter('http_requests_rate_limited_total', 'Requests refused with 429 because their token was over its rate limit, by token kind.', ['token_kind']);
  readonly timedOutRequests = this.counter('http_requests_timed_out_total', 'Requests answered 503 because they did not complete within REQUEST_TIMEOUT_MS.', []);
  readonly auditOutboxWritten = this.counter('audit_outbox_written_total', 'Audit events kept in the outbox because JetStream could not store them at once.', []);
  readonly auditOutboxRelayed = this.counter('audit_outbox_relayed_total', 'Audit events moved from the outbox to JetStream.', []);

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
  }

  private counter<Label extends string>(name: string, help: string, labelNames: readonly Label[]): Counter<Label> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private latency<Label extends string>(name: string, help: string, labelNames: readonly Label[]): Histogram<Label> {
    return new Histogram({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: [this.registry] });
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
