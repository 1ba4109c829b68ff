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
