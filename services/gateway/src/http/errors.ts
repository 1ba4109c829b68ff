import { DomainError, isDependencyUnavailable, type ErrorKind } from '@ota/errors';
import type { Logger } from '@ota/logging';
import type { Context, Next } from 'koa';

/** One entry of a 422 `detail` array (docs/api.md, "Errors"). */
export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** A request-body or query schema failure: 422 with `detail` as an array. */
export class ValidationFailed extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super('validation failed');
  }
}

/**
 * An answer that only HTTP has a word for (405 with Allow, 413); every other refusal is a domain
 * error from @ota/errors, mapped in HTTP_STATUS_OF_KIND below.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Retry-After of a 503 for a store or service that is away, and of the readiness probe's 503. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

// The one table from the domain error vocabulary (carried over gRPC as status codes) to HTTP.
const HTTP_STATUS_OF_KIND: Record<ErrorKind, number> = {
  InvalidArgument: 400,
  FailedPrecondition: 400,
  Aborted: 409,
  Unauthenticated: 401,
  PermissionDenied: 403,
  NotFound: 404,
  AlreadyExists: 409,
  ResourceExhausted: 429,
  Unavailable: 503,
};

/** Every error becomes a JSON body with `detail`; anything unexpected is a logged 500. */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof ValidationFailed) {
        ctx.status = 422;
        ctx.body = { detail: error.issues };
        return;
      }
      if (error instanceof HttpError) {
        ctx.status = error.status;
        ctx.set(error.headers);
        ctx.body = { detail: error.message };
        return;
      }
      if (error instanceof DomainError) {
        ctx.status = HTTP_STATUS_OF_KIND[error.kind];
        if (ctx.status === 503 || ctx.status === 429) ctx.set('Retry-After', String(error.retryAfterSeconds ?? UNAVAILABLE_RETRY_AFTER_SECONDS));
        if (ctx.status === 401) ctx.set('WWW-Authenticate', 'Bearer');
        ctx.body = { detail: error.message };
        return;
      }
      // koa-body and Koa's own errors carry a client status (413, 400 for broken JSON, ...).
      const status = (error as { status?: number; expose?: boolean }).status;
      if (status && status >= 400 && status < 500) {
        ctx.status = status;
        ctx.body = { detail: (error as Error).message || 'bad request' };
        return;
      }
      const requestId = ctx.state.requestId as string;
      if (isDependencyUnavailable(error)) {
        (ctx.state.logger as Logger | undefined ?? logger).warn({ err: error, requestId }, 'a backing store is unavailable');
        ctx.status = 503;
        ctx.set('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
        ctx.body = { detail: 'a backing store is unavailable; retry later' };
        return;
      }
      (ctx.state.logger as Logger | undefined ?? logger).error({ err: error, requestId }, 'request failed');
      ctx.status = 500;
      ctx.body = { detail: `internal error (request id ${requestId})` };
    }
  };
}
