import { randomBytes } from 'node:crypto';
import { invalidArgument, isDomainError, notFound, unauthenticated } from '@ota/errors';
import type { Context } from 'koa';
import { confirmTokenSignIn, principalOf, type Principal } from '../auth/principal';
import { clearSessionCookie, setSessionCookie } from '../auth/session-cookie';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { sessionJson } from '../http/present';
import * as R from '../http/response-schemas';
import { createSessionBody, signInCallbackQuery } from '../http/schemas';

/** How long a sign-in may take at the identity provider, from the redirect there to the way back. */
const SIGN_IN_ATTEMPT_SECONDS = 600;
const CALLBACK_PATH = '/api/v1/session/sso/callback';

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
      await confirmTokenSignIn(token, deps.signIn?.sessions);
      const user = await store.findUser(token.userId);
      if (!user) throw unauthenticated('invalid or revoked token');
      const { session, raw } = await store.createSession(token, config.SESSION_TTL_SECONDS);
      setSessionCookie(ctx, raw, session.expiresAt);
      ctx.status = 201;
      ctx.body = sessionJson(session, user, token);
    },
  );

  signIn.add(
    {
      route: 'GET /session/methods/',
      operationId: 'signInMethods',
      summary: 'How a person may sign in to the console',
      description: 'Always with a personal token; with single sign-on too when an identity provider is configured (`OIDC_ISSUER`), starting at `/session/sso/`.',
      responses: { 200: R.SignInMethods },
    },
    async (ctx) => {
      ctx.body = { personal_token: true, single_sign_on: deps.signIn !== undefined };
    },
  );

  signIn.add(
    {
      route: 'GET /session/sso/',
      operationId: 'startSingleSignOn',
      summary: 'Sign in to the console through the identity provider',
      description:
        'Sends the browser to the configured OpenID provider (authorization code flow with PKCE); it comes back to `/session/sso/callback`. Without single sign-on configured (`OIDC_ISSUER`), 404.',
      responses: { 302: null },
      responseHeaders: { 302: { Location: { description: "The provider's sign-in page.", schema: { type: 'string' } } } },
      errors: [404, 503],
    },
    async (ctx) => {
      const provider = deps.signIn?.provider;
      if (!provider) throw notFound('single sign-on is not configured here; sign in with a personal token');
      const attempt = { state: secret(), nonce: secret(), codeVerifier: secret(), createdAt: new Date() };
      await store.saveSignInAttempt(attempt);
      ctx.redirect(await provider.authorizationUrl({ ...attempt, redirectUri: redirectUriOf(ctx) }));
    },
  );

  signIn.add(
    {
      route: 'GET /session/sso/callback',
      operationId: 'finishSingleSignOn',
      summary: 'Where the identity provider sends the browser back',
      description:
        "Checks the provider's answer (its ID token: signature, issuer, audience, expiry, nonce), creates the person on their first sign-in (by the e-mail the provider vouches for, with the default plan), opens a console session and sends the browser to the console. A state that is unknown, used or older than 10 minutes is 400; a refused sign-in is 401.",
      query: signInCallbackQuery,
      responses: { 302: null },
      responseHeaders: {
        302: {
          Location: { description: 'The console.', schema: { type: 'string' } },
          'Set-Cookie': { description: 'The `ota_session` cookie: HttpOnly, SameSite=Strict, Secure over HTTPS.', schema: { type: 'string' } },
        },
      },
      errors: [400, 401, 404, 422, 503],
    },
    async (ctx, { query }) => {
      const sso = deps.signIn;
      if (!sso) throw notFound('single sign-on is not configured here; sign in with a personal token');
      if (query.error) throw unauthenticated(`the identity provider did not sign you in: ${query.error_description ?? query.error}`);
      if (!query.code || !query.state) throw invalidArgument('the identity provider sent no code and state; start the sign-in again');
      const attempt = await store.takeSignInAttempt(query.state, SIGN_IN_ATTEMPT_SECONDS);
      if (!attempt) throw invalidArgument('this sign-in is unknown, was used already, or took longer than 10 minutes; start it again');
      const { identity, refreshToken, idToken } = await sso.provider.signIn({ code: query.code, codeVerifier: attempt.codeVerifier, redirectUri: redirectUriOf(ctx), nonce: attempt.nonce });
      const user = await personOf(identity.email);
      await store.setSignInGroups(user.id, identity.groups);
      const confirmAt = new Date(Date.now() + config.OIDC_CONFIRM_SECONDS * 1000);
      const { session, raw } = await store.createSignInSession(user.id, { refreshToken, groups: identity.groups, confirmAt, idToken }, config.SESSION_TTL_SECONDS);
      setSessionCookie(ctx, raw, session.expiresAt);
      ctx.redirect('/console/');
    },
  );

  /** The person the provider vouches for, created on their first sign-in with the default plan. */
  async function personOf(email: string) {
    const known = await store.findUserByEmail(email);
    if (known) return known;
    try {
      return await store.createUser(email, false, { maxDevices: config.DEFAULT_MAX_DEVICES, maxUploadsPerMonth: config.DEFAULT_MAX_UPLOADS_PER_MONTH });
    } catch (error) {
      // A second sign-in of the same new person at the same moment created them first.
      if (!isDomainError(error, 'AlreadyExists')) throw error;
      return (await store.findUserByEmail(email))!;
    }
  }

  /** Where the provider sends the browser after signing out: the console, beside the way back of a sign-in. */
  function consoleUrlOf(ctx: Context): string {
    return new URL('/console/', redirectUriOf(ctx)).toString();
  }

  /** Registered at the provider: OIDC_REDIRECT_URL, or this request's own origin (its Host, or a trusted proxy's). */
  function redirectUriOf(ctx: Context): string {
    if (config.OIDC_REDIRECT_URL) return config.OIDC_REDIRECT_URL;
    if (!ctx.host) throw invalidArgument('the request names no Host, so no way back can be given to the identity provider; send Host, or set OIDC_REDIRECT_URL');
    return `${ctx.protocol}://${ctx.host}${CALLBACK_PATH}`;
  }

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
      description:
        "Ends the session at once and clears its cookie. Needs the CSRF token, as every mutating call with the cookie. A single sign-on session answers 200 with `provider_logout_url` when the provider offers RP-initiated logout: send the browser there to end the person's session at the provider too; it comes back to the console.",
      responses: { 200: R.SignedOut, 204: null },
      responseHeaders: {
        200: { 'Set-Cookie': { description: 'Clears the `ota_session` cookie.', schema: { type: 'string' } } },
        204: { 'Set-Cookie': { description: 'Clears the `ota_session` cookie.', schema: { type: 'string' } } },
      },
    },
    async (ctx) => {
      const principal = consoleSession(ctx);
      await store.deleteSession(principal.session.hash);
      clearSessionCookie(ctx);
      const signIn = principal.session.signIn;
      const logoutUrl = signIn && deps.signIn ? await deps.signIn.provider.logoutUrl({ idToken: signIn.idToken, returnTo: consoleUrlOf(ctx) }).catch(() => null) : null;
      if (logoutUrl) ctx.body = { provider_logout_url: logoutUrl };
      else ctx.status = 204;
    },
  );
}

function consoleSession(ctx: Parameters<typeof principalOf>[0]): Principal & { session: NonNullable<Principal['session']> } {
  const principal = principalOf(ctx);
  if (!principal.session) throw unauthenticated('no console session: sign in with POST /api/v1/session/');
  return principal as Principal & { session: NonNullable<Principal['session']> };
}

function secret(): string {
  return randomBytes(32).toString('base64url');
}
