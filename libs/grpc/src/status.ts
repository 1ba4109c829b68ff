import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { DomainError, isDependencyUnavailable, type ErrorKind } from '@ota/errors';

// The one table between the domain error vocabulary and gRPC status codes, used in both
// directions: servers send a DomainError as its code, clients turn the code back into one.
const CODE_OF_KIND: Record<ErrorKind, status> = {
  NotFound: status.NOT_FOUND,
  InvalidArgument: status.INVALID_ARGUMENT,
  AlreadyExists: status.ALREADY_EXISTS,
  FailedPrecondition: status.FAILED_PRECONDITION,
  Aborted: status.ABORTED,
  PermissionDenied: status.PERMISSION_DENIED,
  Unauthenticated: status.UNAUTHENTICATED,
  ResourceExhausted: status.RESOURCE_EXHAUSTED,
  Unavailable: status.UNAVAILABLE,
};

const KIND_OF_CODE = new Map<status, ErrorKind>(
  Object.entries(CODE_OF_KIND).map(([kind, code]) => [code, kind as ErrorKind]),
);
// A peer that did not answer in time is, to our caller, a service that is unavailable.
KIND_OF_CODE.set(status.DEADLINE_EXCEEDED, 'Unavailable');

export interface StatusObject {
  code: status;
  details: string;
  metadata: Metadata;
}

/** The status a server sends for an error thrown by a handler. */
export function statusOfError(error: unknown): StatusObject {
  if (error instanceof DomainError) {
    return { code: CODE_OF_KIND[error.kind], details: error.message, metadata: new Metadata() };
  }
  if (isDependencyUnavailable(error)) {
    return { code: status.UNAVAILABLE, details: 'a backing store is unavailable; retry later', metadata: new Metadata() };
  }
  return { code: status.INTERNAL, details: 'internal error', metadata: new Metadata() };
}

/** An RPC that failed for a reason that is not a domain outcome (a bug, or a broken peer). */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: status,
    details: string,
  ) {
    super(`${method} failed with ${status[code]}: ${details}`);
    this.name = 'RpcError';
  }
}

/**
 * What a failed call may tell the gateway's caller. A deadline, and a transport's own failure to
 * reach a peer, carry grpc-js's text (`remote_addr=127.0.0.1:…`, `connect ECONNREFUSED …`): an
 * address of the cluster, and no help to the caller, so they say only what happened. A service's
 * own refusal keeps its words.
 */
function outwardDetails(error: ServiceError): string {
  if (error.code === status.DEADLINE_EXCEEDED) return 'a service did not answer in time; retry later';
  const transport = /remote_addr=|\b\d{1,3}(\.\d{1,3}){3}:\d+|ECONNREFUSED|ECONNRESET|No connection established|Connection dropped/i;
  if (error.code === status.UNAVAILABLE && transport.test(error.details)) return 'a service is unavailable; retry later';
  return error.details || status[error.code];
}

/** What a client throws for a failed call: a DomainError for domain outcomes, else an RpcError. */
export function errorOfStatus(method: string, error: ServiceError): Error {
  const kind = KIND_OF_CODE.get(error.code);
  if (kind) return new DomainError(kind, outwardDetails(error));
  // A replica of the release before, during a rolling upgrade, does not serve a method this
  // release added (docs/architecture.md, "Changing a message between releases"): the caller
  // retries once the roll has reached it, as for any peer that is away.
  if (error.code === status.UNIMPLEMENTED) return new DomainError('Unavailable', `${method} is not served by this replica yet (an upgrade in progress); retry later`);
  return new RpcError(method, error.code, error.details);
}
