import { status } from '@grpc/grpc-js';
import type { Counter, CounterSeries, HistogramSeries, ServiceMetrics } from '@ota/metrics';

// gRPC metric names and labels follow go-grpc-prometheus, codes included (`Unavailable`, not
// `UNAVAILABLE`), so dashboards and alerts written for Go services work unchanged.
const LABELS = ['grpc_type', 'grpc_service', 'grpc_method'] as const;

type MethodLabels = Record<(typeof LABELS)[number], string>;

/**
 * One method's series, held by its wrapper so that a call counts without a lookup: a call of the
 * check path passes through three or four of these in each process it crosses.
 */
export interface MethodMetrics {
  started: CounterSeries;
  /** The completions with one status code. */
  handled(code: status): CounterSeries;
  handling: HistogramSeries;
}

export function grpcServerMetrics(metrics: ServiceMetrics) {
  const started = metrics.counter('grpc_server_started_total', 'RPCs started on the server.', LABELS);
  const handled = metrics.counter('grpc_server_handled_total', 'RPCs completed on the server, by status code.', [...LABELS, 'grpc_code']);
  const handling = metrics.histogram('grpc_server_handling_seconds', 'Time the server took to complete an RPC.', LABELS);
  return { of: (labels: MethodLabels): MethodMetrics => ({ started: started.seriesOf(labels), handled: byCode(handled, labels), handling: handling.seriesOf(labels) }) };
}

export function grpcClientMetrics(metrics: ServiceMetrics) {
  const handled = metrics.counter('grpc_client_handled_total', 'RPCs completed by the client, by status code.', [...LABELS, 'grpc_code']);
  const handling = metrics.histogram('grpc_client_handling_seconds', 'Time from the client starting an RPC to its completion.', LABELS);
  return { of: (labels: MethodLabels): Omit<MethodMetrics, 'started'> => ({ handled: byCode(handled, labels), handling: handling.seriesOf(labels) }) };
}

/** A method's series of completions by status code, each made when its code first comes. */
function byCode(handled: Counter<keyof MethodLabels | 'grpc_code'>, labels: MethodLabels): (code: status) => CounterSeries {
  const series: CounterSeries[] = [];
  return (code) => (series[code] ??= handled.seriesOf({ ...labels, grpc_code: grpcCodeLabel(code) }));
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
