import { randomUUID } from 'node:crypto';
import pino from 'pino';

export type Logger = pino.Logger;

export const REQUEST_ID_HEADER = 'x-request-id';

// Never log a bearer token, whichever object happens to carry it.
const REDACTED_PATHS = ['authorization', 'headers.authorization', 'req.headers.authorization', '*.token', 'token'];

export function createLogger(service: string, level: string = 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** Accepts a caller's request id when it is short and printable, else makes a new one. */
export function requestIdFrom(candidate: string | undefined): string {
  if (candidate && /^[A-Za-z0-9._:-]{1,128}$/.test(candidate)) return candidate;
  return randomUUID();
}

/** The W3C Trace Context header, passed through every hop (docs/operations.md, "Logs and traces"). */
export const TRACEPARENT_HEADER = 'traceparent';

// version 00 (or a later one, which must still start like 00): trace-id, parent-id, flags; neither
// id all zeros (https://www.w3.org/TR/trace-context/#traceparent-header).
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})([0-9a-f]{32})-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$/;

/** A caller's traceparent when it is well-formed, else none: a malformed one is dropped, as the standard asks. */
export function traceparentFrom(candidate: string | undefined): string | undefined {
  if (!candidate || candidate.length > 512) return undefined;
  const value = candidate.trim().toLowerCase();
  // Version 00 has exactly four fields; a later version may append more.
  if (!TRACEPARENT.test(value) || (value.startsWith('00-') && value.length !== 55)) return undefined;
  return value;
}

/** What each request carries from hop to hop: our request id, and the caller's trace context if it sent one. */
export interface RequestTrace {
  requestId: string;
  traceparent?: string;
}

/**
 * The one call context of every service (docs/architecture.md, "One call context"): what a call
 * carries to the next process, the request's trace and the deadline that spans the whole request.
 * Every port method and use case that reaches another process takes it as its last argument,
 * named `call`; a gRPC handler passes its own CallContext, which is one, and the gateway makes one
 * per HTTP request (routes/context.ts). Adapters hold no call of their own.
 */
export interface OutboundCall extends RequestTrace {
  /** An absolute deadline; without it, the client's default timeout applies. */
  deadline?: Date | number;
}

/** The fields every log line of a request carries: the request id, and the trace id when traced. */
export function logFieldsOf(trace: RequestTrace): { requestId: string; traceId?: string } {
  return trace.traceparent ? { requestId: trace.requestId, traceId: trace.traceparent.slice(3, 35) } : { requestId: trace.requestId };
}
