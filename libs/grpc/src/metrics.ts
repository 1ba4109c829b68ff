import { status } from '@grpc/grpc-js';
import type { ServiceMetrics } from '@ota/metrics';

// gRPC metric names and labels follow go-grpc-prometheus, codes included (`Unavailable`, not
// `UNAVAILABLE`), so dashboards and alerts written for Go services work unchanged.
const LABELS = ['grpc_type', 'grpc_service', 'grpc_method'] as const;

export function grpcServerMetrics(metrics: ServiceMetrics) {
  return {
    started: metrics.counter('grpc_server_started_total', 'RPCs started on the server.', LABELS),
    handled: metrics.counter('grpc_server_handled_total', 'RPCs completed on the server, by status code.', [...LABELS, 'grpc_code']),
    handling: metrics.histogram('grpc_server_handling_seconds', 'Time the server took to complete an RPC.', LABELS),
  };
}

export function grpcClientMetrics(metrics: ServiceMetrics) {
  return {
    handled: metrics.counter('grpc_client_handled_total', 'RPCs completed by the client, by status code.', [...LABELS, 'grpc_code']),
    handling: metrics.histogram('grpc_client_handling_seconds', 'Time from the client starting an RPC to its completion.', LABELS),
  };
}

const CAMEL_CASE_CODES = new Map<number, string>(
  Object.entries(status)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .map(([name, code]) => [code, name.toLowerCase().replace(/(^|_)([a-z])/g, (_match, _separator, letter: string) => letter.toUpperCase())]),
);
// Go spells this one "OK", not "Ok".
CAMEL_CASE_CODES.set(status.OK, 'OK');

/** The `grpc_code` label of a status: Go's spelling, e.g. `DeadlineExceeded`. */
export function grpcCodeLabel(code: status): string {
  return CAMEL_CASE_CODES.get(code) ?? String(code);
}
