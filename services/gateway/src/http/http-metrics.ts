import type { ServiceMetrics } from '@ota/metrics';
import { CHECK_STATUSES } from '@ota/vocabulary';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The gateway's HTTP metrics (docs/operations.md, "Metrics"). Every label is bounded: no path, id or token. */
export function httpMetrics(metrics: ServiceMetrics) {
  const rateLimited = metrics.counter('http_requests_rate_limited_total', 'Requests refused with 429 because their token was over its rate limit, by token kind.', ['token_kind']);
  for (const kind of ['developer', 'device_token', 'fleet_token']) rateLimited.inc({ token_kind: kind }, 0);
  // Each answer is served from 0, so that the first checks of an outcome show as an increase.
  const deviceChecks = metrics.counter('ota_device_checks_total', "Device checks answered, by the answer's status (offered, up_to_date, no_compatible_build, ...).", ['status']);
  for (const status of CHECK_STATUSES) deviceChecks.inc({ status }, 0);
  // What offers ask devices to download: the build's bytes, or a delta patch's instead; and, for
  // the offers with a patch, the builds' own bytes, so that patch / patched_image is the saving.
  const offeredBytes = metrics.counter('ota_offered_bytes_total', 'Bytes offers ask devices to download, by kind: image (no patch offered) or patch; patched_image counts the full builds of the offers that carried a patch.', ['kind']);
  for (const kind of ['image', 'patch', 'patched_image']) offeredBytes.inc({ kind }, 0);
  return {
    requests: metrics.counter('http_requests_total', 'HTTP requests completed, by route pattern and status.', ['method', 'route', 'status']),
    duration: metrics.histogram('http_request_duration_seconds', 'HTTP request latency, by route pattern.', ['method', 'route']),
    shed: metrics.counter('http_requests_shed_total', 'Device API requests refused with 503 because the gateway was at its concurrency limit.'),
    rateLimited,
    timedOut: metrics.counter('http_requests_timed_out_total', 'Requests answered 503 because they did not complete within REQUEST_TIMEOUT_MS.'),
    deviceChecks,
    offeredBytes,
  };
}

export type HttpMetrics = ReturnType<typeof httpMetrics>;

/** The method as a label: one of HTTP's own, else `other` (a client may send any token there). */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'other';
}
