import { unavailable } from '@ota/errors';
import type { Context, Next } from 'koa';
import type { Logger } from '@ota/logging';

/**
 * Requests whose gRPC calls carry their own deadline: uploads and downloads stream for as long as
 * the bytes take (GRPC_STREAM_TIMEOUT_MS), and a deployment preview reads the whole fleet
 * (PREVIEW_TIMEOUT_MS).
 */
export function hasOwnDeadline(ctx: Context): boolean {
  if (ctx.method === 'GET') return ctx.path.startsWith('/api/v1/ota/download/') || /^\/api\/v1\/projects\/[^/]+\/deployments\/[^/]+\/preview\/?$/.test(ctx.path);
  return ctx.method === 'POST' && /^\/api\/v1\/projects\/[^/]+\/(artifacts|release)\/?$/.test(ctx.path);
}

/**
 * Answers 503 with Retry-After when a request has not completed within `timeoutMs`, whatever it
 * waits on (a store that is down, a peer that does not answer), so that no caller hangs. The work
 * itself is not cancelled and may still complete; a caller that retries must expect that, which is
 * why every device report and every retried mutation is safe to repeat or is refused as a duplicate.
 */
export function requestDeadline(timeoutMs: number, retryAfterSeconds: number, logger: Logger, onTimeout: () => void) {
  return async (ctx: Context, next: Next) => {
    if (hasOwnDeadline(ctx)) return next();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), timeoutMs);
    });
    const work = next().then(() => 'done' as const);
    try {
      const outcome = await Promise.race([work, expired]);
      if (outcome === 'expired') {
        onTimeout();
        // The services log each call that answers after this (libs/grpc, "rpc finished after its
        // caller gave up"), under the same request id: together they say what held the request up.
        ((ctx.state.logger as Logger | undefined) ?? logger).warn({ requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, ms: timeoutMs }, 'request passed its deadline; answered 503');
        work.catch((error: unknown) => logger.warn({ err: error, requestId: ctx.state.requestId }, 'request failed after its deadline'));
        throw unavailable(`the request did not complete within ${timeoutMs} ms; retry later`, retryAfterSeconds);
      }
    } finally {
      clearTimeout(timer);
    }
  };
}
