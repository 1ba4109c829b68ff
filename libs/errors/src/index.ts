// Domain code throws these; the gRPC layer sends them as status codes and the gateway maps the
// codes to HTTP in one table. Anything else is an internal error.

export type ErrorKind =
  | 'NotFound'
  | 'InvalidArgument'
  | 'AlreadyExists'
  | 'FailedPrecondition'
  /** The request conflicts with the resource's current state (HTTP 409), e.g. deleting a project that is rolling out. */
  | 'Aborted'
  | 'PermissionDenied'
  | 'Unauthenticated'
  | 'ResourceExhausted'
  | 'Unavailable';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** ResourceExhausted and Unavailable: when the caller may try again, if the thrower knows. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = kind;
  }
}

export const notFound = (message: string) => new DomainError('NotFound', message);
export const invalidArgument = (message: string) => new DomainError('InvalidArgument', message);
export const alreadyExists = (message: string) => new DomainError('AlreadyExists', message);
export const failedPrecondition = (message: string) => new DomainError('FailedPrecondition', message);
export const conflict = (message: string) => new DomainError('Aborted', message);
export const permissionDenied = (message: string) => new DomainError('PermissionDenied', message);
export const unauthenticated = (message: string) => new DomainError('Unauthenticated', message);
export const resourceExhausted = (message: string, retryAfterSeconds?: number) => new DomainError('ResourceExhausted', message, retryAfterSeconds);
export const unavailable = (message: string, retryAfterSeconds?: number) => new DomainError('Unavailable', message, retryAfterSeconds);

export function isDomainError(error: unknown, kind?: ErrorKind): error is DomainError {
  return error instanceof DomainError && (kind === undefined || error.kind === kind);
}

// Errors of a backing store or peer that is down or unreachable, by the names and codes the
// MongoDB driver, mongoose, the AWS SDK, nats.js and Node's sockets give them. They are not bugs:
// the caller gets Unavailable (503 with Retry-After) and may retry.
const UNAVAILABLE_ERROR_NAMES = new Set([
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoPoolClearedError',
  'MongoTopologyClosedError',
  'TimeoutError', // nats.js: no acknowledgement in time; AWS SDK: socket timeout
  'RequestTimeout',
  'ServiceUnavailable',
  'SlowDown',
]);
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** True for an error that says a backing store or peer is unreachable, down, or too slow now. */
export function isDependencyUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false;
  const { name, code, message, cause, $metadata } = error as {
    name?: string;
    code?: string;
    message?: string;
    cause?: unknown;
    $metadata?: { httpStatusCode?: number };
  };
  if (name && UNAVAILABLE_ERROR_NAMES.has(name)) return true;
  if (typeof code === 'string' && UNAVAILABLE_SOCKET_CODES.has(code)) return true;
  // nats.js while disconnected; mongoose when its connection is down and buffering times out.
  if (code === 'CONNECTION_CLOSED' || code === 'DISCONNECT' || /buffering timed out|connection (is )?closed|disconnected/i.test(message ?? '')) return true;
  if ($metadata?.httpStatusCode !== undefined && $metadata.httpStatusCode >= 500) return true;
  return isDependencyUnavailable(cause, depth + 1);
}
