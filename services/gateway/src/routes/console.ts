import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { send } from '@koa/send';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { GatewayDeps } from '../deps';

// The web console is static files built by services/console (Vite), served here on the API's own
// origin: it needs no CORS, and the session cookie never leaves this origin.

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  // The chart library sets inline style attributes.
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Where the built console is: CONSOLE_DIR, or the @ota/console package's dist/. */
export function consoleDirectory(configured: string): string {
  if (configured) return configured;
  try {
    return join(dirname(require.resolve('@ota/console/package.json')), 'dist');
  } catch {
    return '';
  }
}

export function consoleRoutes(deps: GatewayDeps): Router {
  const root = consoleDirectory(deps.config.CONSOLE_DIR);
  const router = new Router();
  router.get('/', (ctx) => ctx.redirect('/console/'));
  router.get(['/console', '/console/{*path}'], async (ctx: Context) => {
    // The router matches with or without the trailing slash; relative asset URLs need it.
    if (ctx.path === '/console') {
      ctx.redirect('/console/');
      return;
    }
    if (!root || !existsSync(join(root, 'index.html'))) {
      ctx.status = 404;
      ctx.body = { detail: 'the console is not built here: run "npm run build" (or set CONSOLE_DIR)' };
      return;
    }
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    const path = (ctx.params.path as string | undefined) ?? '';
    // Hashed asset names never change content; anything else is a route of the single-page app.
    if (path.startsWith('assets/') && !path.includes('..') && existsSync(join(root, path))) {
      await send(ctx, path, { root, immutable: true, maxage: 365 * 24 * 3600 * 1000 });
      return;
    }
    ctx.set('Cache-Control', 'no-cache');
    await send(ctx, 'index.html', { root });
  });
  return router;
}
