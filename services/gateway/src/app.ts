import Koa from 'koa';
import { koaBody } from 'koa-body';
import { REQUEST_ID_HEADER, requestIdFrom } from '@ota/logging';
import type { GatewayDeps } from './deps';
import { HttpError, errorMiddleware } from './http/errors';
import { developerRoutes } from './routes/developer';
import { deviceRoutes, downloadRoutes } from './routes/device-api';
import { healthRoutes } from './routes/health';

/** Builds the gateway's Koa app without listening, so that tests can drive it directly. */
export function createApp(deps: GatewayDeps): Koa {
  const app = new Koa({ proxy: true });
  const { metrics } = deps;

  app.use(async (ctx, next) => {
    const requestId = requestIdFrom(ctx.get(REQUEST_ID_HEADER) || undefined);
    ctx.state.requestId = requestId;
    ctx.state.logger = deps.logger.child({ requestId });
    ctx.set(REQUEST_ID_HEADER, requestId);
    const startedAt = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, seconds);
      // One line per request at debug: at fleet rates an info-level access log would dominate.
      ctx.state.logger.debug({ method: ctx.method, route, status: ctx.status, ms: Math.round(seconds * 1000) }, 'request');
    }
  });
  app.use(errorMiddleware(deps.logger));
  app.use(
    koaBody({
      // Multipart bodies are streamed by the upload routes themselves, never buffered here.
      multipart: false,
      urlencoded: false,
      text: false,
      json: true,
      jsonLimit: deps.config.JSON_BODY_LIMIT_BYTES,
      jsonStrict: true,
      onError: (error) => {
        const tooLarge = (error as { status?: number }).status === 413;
        throw tooLarge
          ? new HttpError(413, `JSON body is larger than ${deps.config.JSON_BODY_LIMIT_BYTES} bytes`)
          : new HttpError(400, 'body is not valid JSON');
      },
    }),
  );

  for (const router of [healthRoutes(deps), downloadRoutes(deps), deviceRoutes(deps), developerRoutes(deps)]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = { detail: 'no such endpoint' };
  });
  return app;
}
