import Router from '@koa/router';
import type { GatewayDeps } from '../deps';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../http/errors';

export function healthRoutes(deps: GatewayDeps): Router {
  const router = new Router();
  // Liveness: the process answers. Nothing else is checked, so a slow store never restarts pods.
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  // Readiness: every service and store a request may need answers right now.
  router.get('/readyz', async (ctx) => {
    try {
      await deps.checkReadiness();
      ctx.body = { status: 'ready' };
    } catch (error) {
      ctx.status = 503;
      ctx.set('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      ctx.body = { status: 'not ready', detail: (error as Error).message };
    }
  });
  return router;
}
