// Domain code throws these; the gRPC layer sends them as status codes and the gateway maps the
// codes to HTTP in one table. Anything else is an internal error.

export type ErrorKind =
  | 'NotFound'
  | 'InvalidArgument'
  | 'AlreadyExists'
  | 'FailedPrecondition'
  | 'PermissionDenied'
  | 'Unauthenticated'
  | 'ResourceExhausted'
  | 'Unavailable';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
    this.name = kind;
  }
}

export const notFound = (message: string) => new DomainError('NotFound', message);
export const invalidArgument = (message: string) => new DomainError('InvalidArgument', message);
export const alreadyExists = (message: string) => new DomainError('AlreadyExists', message);
export const failedPrecondition = (message: string) => new DomainError('FailedPrecondition', message);
export const permissionDenied = (message: string) => new DomainError('PermissionDenied', message);
export const unauthenticated = (message: string) => new DomainError('Unauthenticated', message);
export const resourceExhausted = (message: string) => new DomainError('ResourceExhausted', message);
export const unavailable = (message: string) => new DomainError('Unavailable', message);

export function isDomainError(error: unknown, kind?: ErrorKind): error is DomainError {
  return error instanceof DomainError && (kind === undefined || error.kind === kind);
}
