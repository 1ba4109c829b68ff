import { unauthenticated } from '@ota/errors';
import { principalOf, type Principal } from '../auth/principal';
import { clearSessionCookie, setSessionCookie } from '../auth/session-cookie';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { sessionJson } from '../http/present';
import * as R from '../http/response-schemas';
import { createSessionBody } from '../http/schemas';

/**
 * The web console's sign-in: a personal token is exchanged for an HttpOnly session cookie, so the
 * browser never keeps the raw token where a script could read it. Bearer tokens are unaffected.
 */
export function sessionRoutes(table: OperationTable, deps: GatewayDeps): void {
  const signIn = table.section({ tag: 'Console session', access: 'public' });
  const session = table.section({ tag: 'Console session', access: 'personal' });
  const { store, config } = deps;

  signIn.add(
    {
      route: 'POST /session/',
      operationId: 'createSession',
      summary: 'Sign in to the console',
      description:
        "Exchanges a personal token for a session: an `ota_session` cookie (HttpOnly, SameSite=Strict, Secure over HTTPS) that expires after `SESSION_TTL_SECONDS` and acts with that token, so revoking the token ends the session. Every mutating call made with the cookie must send the answer's `csrf_token` in `x-csrf-token`. Any other kind of token is 401.",
      body: createSessionBody,
      responses: { 201: R.Session },
      responseHeaders: { 201: { 'Set-Cookie': { description: 'The `ota_session` cookie: HttpOnly, SameSite=Strict, Secure over HTTPS.', schema: { type: 'string' } } } },
      errors: [400, 401, 422],
    },
    async (ctx, { body }) => {
      const token = await store.authenticate(body.token);
      if (!token) throw unauthenticated('invalid or revoked token');
      if (token.kind !== 'personal') throw unauthenticated('sign in to the console with a personal token');
      const user = await store.findUser(token.userId);
      if (!user) throw unauthenticated('invalid or revoked token');
      const { session, raw } = await store.createSession(token, config.SESSION_TTL_SECONDS);
      setSessionCookie(ctx, raw, session.expiresAt);
      ctx.status = 201;
      ctx.body = sessionJson(session, user, token);
    },
  );

  session.add(
    {
      route: 'GET /session/',
      operationId: 'getSession',
      summary: 'The console session',
      description: 'Who is signed in, and the CSRF token, for a console that was reloaded. Without a session cookie: 401.',
      responses: { 200: R.Session },
    },
    async (ctx) => {
      const principal = consoleSession(ctx);
      const user = await store.findUser(principal.userId);
      if (!user) throw unauthenticated('the console session has ended; sign in again');
      ctx.body = sessionJson(principal.session, user, principal.token);
    },
  );

  session.add(
    {
      route: 'DELETE /session/',
      operationId: 'deleteSession',
      summary: 'Sign out of the console',
      description: 'Ends the session at once and clears its cookie. Needs the CSRF token, as every mutating call with the cookie.',
      responses: { 204: null },
      responseHeaders: { 204: { 'Set-Cookie': { description: 'Clears the `ota_session` cookie.', schema: { type: 'string' } } } },
    },
    async (ctx) => {
      const principal = consoleSession(ctx);
      await store.deleteSession(principal.session.hash);
      clearSessionCookie(ctx);
      ctx.status = 204;
    },
  );
}

function consoleSession(ctx: Parameters<typeof principalOf>[0]): Principal & { session: NonNullable<Principal['session']> } {
  const principal = principalOf(ctx);
  if (!principal.session) throw unauthenticated('no console session: sign in with POST /api/v1/session/');
  return principal as Principal & { session: NonNullable<Principal['session']> };
}
