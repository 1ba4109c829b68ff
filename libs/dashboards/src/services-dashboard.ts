import type { Dashboard } from '@grafana/schema';
import { IN_NAMESPACE as NS, dashboard, stat, timeseries } from './panels';

const GATEWAY = `ota_component="gateway", ${NS}`;

/** A 0 for each `label` value `series` has: what `or` adds so a failure rate shows 0 while nothing fails. */
const ZERO_BY = (label: string, series: string) => `sum by (${label}) (rate(${series}[$__rate_interval])) * 0`;

/**
 * The services' health: the golden signals (rate, errors, latency, saturation) of the gateway per
 * route and of every service per gRPC method, then the store, object storage, the bus and webhooks.
 */
export function servicesDashboard(): Dashboard {
  return dashboard('ota-services', 'OTA: service health', 'Golden signals per service and gRPC method; MongoDB, object storage, NATS and webhooks.', [
    { row: 'Processes' },
    timeseries({ title: 'Ready replicas', description: 'Replicas passing their readiness check, per component.', queries: [{ expr: `sum by (ota_component) (ota_ready{${NS}})`, legend: '{{ota_component}}' }], width: 8 }),
    timeseries({ title: 'CPU', description: 'CPU seconds per second, per component (all replicas).', queries: [{ expr: `sum by (ota_component) (rate(process_cpu_seconds_total{${NS}, ota_component!=""}[$__rate_interval]))`, legend: '{{ota_component}}' }], unit: 'percentunit', width: 8 }),
    timeseries({ title: 'Memory', description: 'Resident memory of the largest replica, per component.', queries: [{ expr: `max by (ota_component) (process_resident_memory_bytes{${NS}, ota_component!=""})`, legend: '{{ota_component}}' }], unit: 'bytes', width: 8 }),
    timeseries({ title: 'Event-loop lag (p99)', description: 'How late timers run: a saturated process shows it here first.', queries: [{ expr: `max by (ota_component) (nodejs_eventloop_lag_p99_seconds{${NS}, ota_component!=""})`, legend: '{{ota_component}}' }], unit: 's' }),

    { row: 'Gateway' },
    timeseries({ title: 'Requests by route', description: 'HTTP requests per second, by route pattern.', queries: [{ expr: `sum by (route) (rate(http_requests_total{${GATEWAY}}[$__rate_interval]))`, legend: '{{route}}' }], unit: 'reqps' }),
    timeseries({
      title: 'Errors by route',
      description: 'Share of each route answered with a 5xx.',
      // A route without 5xx shows 0, not nothing.
      queries: [{ expr: `(sum by (route) (rate(http_requests_total{${GATEWAY}, status=~"5.."}[$__rate_interval])) or ${ZERO_BY('route', `http_requests_total{${GATEWAY}}`)}) / sum by (route) (rate(http_requests_total{${GATEWAY}}[$__rate_interval]))`, legend: '{{route}}' }],
      unit: 'percentunit',
    }),
    timeseries({
      title: 'Latency by route (p99)',
      description: '99th percentile of each route’s latency.',
      queries: [{ expr: `histogram_quantile(0.99, sum by (route, le) (rate(http_request_duration_seconds_bucket{${GATEWAY}}[$__rate_interval])))`, legend: '{{route}}' }],
      unit: 's',
    }),
    timeseries({
      title: 'Refused before work',
      description: 'Device requests shed at the concurrency limit, requests over their token’s rate limit, and requests past REQUEST_TIMEOUT_MS.',
      queries: [
        { expr: `sum(rate(http_requests_shed_total{${GATEWAY}}[$__rate_interval]))`, legend: 'shed (503)' },
        { expr: `sum by (token_kind) (rate(http_requests_rate_limited_total{${GATEWAY}}[$__rate_interval]))`, legend: 'rate limited (429), {{token_kind}}' },
        { expr: `sum(rate(http_requests_timed_out_total{${GATEWAY}}[$__rate_interval]))`, legend: 'timed out (503)' },
      ],
      unit: 'reqps',
    }),

    { row: 'gRPC' },
    timeseries({ title: 'Calls by method', description: 'RPCs completed per second on the servers, by service and method.', queries: [{ expr: `sum by (grpc_service, grpc_method) (rate(grpc_server_handled_total{${NS}}[$__rate_interval]))`, legend: '{{grpc_method}}' }], unit: 'reqps' }),
    timeseries({
      title: 'Failed calls by method and code',
      description: 'RPCs that ended with a code other than OK (NotFound and the like are often answers, Internal and Unavailable are not).',
      queries: [{ expr: `sum by (grpc_method, grpc_code) (rate(grpc_server_handled_total{${NS}, grpc_code!="OK"}[$__rate_interval]))`, legend: '{{grpc_method}} {{grpc_code}}' }],
      unit: 'reqps',
    }),
    timeseries({
      title: 'Server latency by method (p99)',
      description: '99th percentile of the time each method takes on its server.',
      queries: [{ expr: `histogram_quantile(0.99, sum by (grpc_method, le) (rate(grpc_server_handling_seconds_bucket{${NS}}[$__rate_interval])))`, legend: '{{grpc_method}}' }],
      unit: 's',
    }),
    timeseries({
      title: 'Unreachable peers',
      description: 'Client calls that ended Unavailable or DeadlineExceeded, by the service called.',
      queries: [{ expr: `sum by (grpc_service) (rate(grpc_client_handled_total{${NS}, grpc_code=~"Unavailable|DeadlineExceeded"}[$__rate_interval])) or ${ZERO_BY('grpc_service', `grpc_client_handled_total{${NS}}`)}`, legend: '{{grpc_service}}' }],
      unit: 'reqps',
    }),

    { row: 'MongoDB' },
    stat({ title: 'Replicas reaching MongoDB', description: 'Processes whose driver reaches the server, out of all.', queries: [{ expr: `sum(ota_mongodb_reachable{${NS}})` }], width: 4, height: 8 }),
    timeseries({
      title: 'Operation latency (p99)',
      description: '99th percentile of the time a pooled connection is held for one command (its answer read), by component.',
      queries: [{ expr: `histogram_quantile(0.99, sum by (ota_component, le) (rate(ota_mongodb_operation_duration_seconds_bucket{${NS}}[$__rate_interval])))`, legend: '{{ota_component}}' }],
      unit: 's',
      width: 10,
    }),
    timeseries({
      title: 'Lost connections',
      description: 'Pooled connections closed by a network failure or timeout, by component; the command on each failed. Failures by command need MONGODB_COMMAND_METRICS.',
      queries: [{ expr: `sum by (ota_component) (rate(ota_mongodb_connections_lost_total{${NS}}[$__rate_interval]))`, legend: '{{ota_component}}' }],
      unit: 'reqps',
      width: 10,
    }),

    { row: 'Object storage' },
    timeseries({ title: 'Requests by operation', description: 'Object-storage requests per second from the artifacts service.', queries: [{ expr: `sum by (operation) (rate(ota_s3_request_duration_seconds_count{${NS}}[$__rate_interval]))`, legend: '{{operation}}' }], unit: 'reqps', width: 8 }),
    timeseries({ title: 'Failed requests', description: 'By operation and by whose the failure is: client_error (4xx) or server_error (5xx, no answer).', queries: [{ expr: `sum by (operation, kind) (rate(ota_s3_request_failures_total{${NS}}[$__rate_interval]))`, legend: '{{operation}} {{kind}}' }], unit: 'reqps', width: 8 }),
    timeseries({
      title: 'Latency (p99)',
      description: '99th percentile of the time to each request’s answer (a download’s body streams after).',
      queries: [{ expr: `histogram_quantile(0.99, sum by (operation, le) (rate(ota_s3_request_duration_seconds_bucket{${NS}}[$__rate_interval])))`, legend: '{{operation}}' }],
      unit: 's',
      width: 8,
    }),

    { row: 'NATS and JetStream' },
    timeseries({ title: 'Connected to NATS', description: 'Processes connected to NATS, per component.', queries: [{ expr: `sum by (ota_component) (ota_nats_connected{${NS}})`, legend: '{{ota_component}}' }], width: 8 }),
    timeseries({
      title: 'Consumer backlog',
      description: 'Events waiting for each durable consumer: not yet delivered, and delivered but not acknowledged.',
      queries: [
        { expr: `max by (stream, consumer) (ota_jetstream_consumer_pending_messages{${NS}})`, legend: '{{consumer}} pending' },
        { expr: `max by (stream, consumer) (ota_jetstream_consumer_ack_pending_messages{${NS}})`, legend: '{{consumer}} unacknowledged' },
      ],
      width: 8,
    }),
    timeseries({
      title: 'Bus failures',
      description: 'Durable publishes JetStream did not acknowledge, and durable events whose handler failed (delivered again).',
      queries: [
        { expr: `sum by (subject) (rate(ota_nats_publish_failures_total{${NS}}[$__rate_interval]))`, legend: 'publish {{subject}}' },
        { expr: `sum by (consumer) (rate(ota_nats_handler_failures_total{${NS}}[$__rate_interval]))`, legend: 'handler {{consumer}}' },
      ],
      unit: 'reqps',
      width: 8,
    }),

    { row: 'Webhooks' },
    timeseries({ title: 'Delivery attempts by result', description: 'delivered; retrying (failed, tried again later); failed (the retry window is over).', queries: [{ expr: `sum by (result) (rate(ota_webhook_delivery_attempts_total{${NS}}[$__rate_interval]))`, legend: '{{result}}' }], unit: 'reqps', width: 8 }),
    timeseries({ title: 'Pending deliveries', description: 'Deliveries waiting for their first or next attempt.', queries: [{ expr: `max(ota_webhook_pending_deliveries{${NS}})`, legend: 'pending' }], width: 8 }),
    timeseries({ title: 'Oldest pending delivery', description: 'How long the oldest pending delivery has waited since its event.', queries: [{ expr: `max(ota_webhook_oldest_pending_delivery_age_seconds{${NS}})`, legend: 'age' }], unit: 's', width: 8 }),
  ]);
}
