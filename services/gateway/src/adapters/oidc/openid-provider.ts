import { createHash } from 'node:crypto';
import { unauthenticated, unavailable } from '@ota/errors';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { IdentityProvider, SignInTokens } from '../../auth/sign-in';

export interface OpenIdSettings {
  /** The issuer URL; its discovery document is read from `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  /** The ID token claim that lists the person's groups. */
  groupsClaim: string;
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  end_session_endpoint?: string;
}

/**
 * An OpenID Connect provider (Keycloak, Okta, Azure AD and the like; docs/operations.md, "Single
 * sign-on"), reached with the authorization code flow, PKCE (S256) and the client's secret. ID
 * tokens are checked with the provider's published keys (jose), its issuer, this client as
 * audience, their expiry and the sign-in's nonce.
 */
export class OpenIdProvider implements IdentityProvider {
  private discovery?: Promise<Discovery>;
  private keys?: ReturnType<typeof createRemoteJWKSet>;

  constructor(private readonly settings: OpenIdSettings) {}

  async authorizationUrl(request: { state: string; nonce: string; codeVerifier: string; redirectUri: string }): Promise<string> {
    const { authorization_endpoint } = await this.discover();
    const url = new URL(authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.settings.clientId,
      redirect_uri: request.redirectUri,
      scope: this.settings.scopes,
      state: request.state,
      nonce: request.nonce,
      code_challenge: createHash('sha256').update(request.codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return url.toString();
  }

  async signIn(request: { code: string; codeVerifier: string; redirectUri: string; nonce: string }): Promise<SignInTokens> {
    const answer = await this.tokenRequest({ grant_type: 'authorization_code', code: request.code, redirect_uri: request.redirectUri, code_verifier: request.codeVerifier });
    if (!answer.ok) throw unauthenticated(`the identity provider refused the sign-in: ${answer.error}`);
    return this.tokensOf(answer.body, request.nonce);
  }

  async confirm(refreshToken: string): Promise<SignInTokens | null> {
    const answer = await this.tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken });
    if (!answer.ok) return null;
    return this.tokensOf({ refresh_token: refreshToken, ...answer.body }, undefined);
  }

  async logoutUrl(request: { idToken: string; returnTo: string }): Promise<string | null> {
    const { end_session_endpoint } = await this.discover();
    if (!end_session_endpoint) return null;
    const url = new URL(end_session_endpoint);
    url.search = new URLSearchParams({
      client_id: this.settings.clientId,
      post_logout_redirect_uri: request.returnTo,
      ...(request.idToken ? { id_token_hint: request.idToken } : {}),
    }).toString();
    return url.toString();
  }

  /** Checks an ID token as a sign-in must (exported for the tests of a tampered or expired token). */
  async verifyIdToken(idToken: string, nonce: string | undefined): Promise<SignInTokens['identity']> {
    const discovery = await this.discover();
    this.keys ??= createRemoteJWKSet(new URL(discovery.jwks_uri));
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.keys, { issuer: discovery.issuer, audience: this.settings.clientId }));
    } catch (error) {
      throw unauthenticated(`the identity provider's ID token is not valid: ${(error as Error).message}`);
    }
    if (nonce !== undefined && payload.nonce !== nonce) throw unauthenticated("the identity provider's ID token is not for this sign-in (nonce)");
    if (typeof payload.email !== 'string' || !payload.email.includes('@')) throw unauthenticated('the identity provider gave no e-mail address for this person; ask its administrator to release the email claim');
    // The e-mail names the person here: one the provider says it has not verified names no one.
    if (payload.email_verified === false) throw unauthenticated('the identity provider has not verified this person\'s e-mail address, which is what names them here');
    const groups = payload[this.settings.groupsClaim];
    return {
      subject: String(payload.sub),
      email: payload.email.toLowerCase(),
      groups: Array.isArray(groups) ? groups.filter((group): group is string => typeof group === 'string') : [],
    };
  }

  private async tokensOf(body: Record<string, unknown>, nonce: string | undefined): Promise<SignInTokens> {
    if (typeof body.id_token !== 'string') throw unauthenticated('the identity provider answered without an ID token; the scopes must include openid');
    return { identity: await this.verifyIdToken(body.id_token, nonce), refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : '', idToken: body.id_token };
  }

  private async tokenRequest(form: Record<string, string>): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; error: string }> {
    const { token_endpoint } = await this.discover();
    const response = await this.reach(token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form, client_id: this.settings.clientId, client_secret: this.settings.clientSecret }).toString(),
    });
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.ok) return { ok: true, body };
    // 400 and 401 are the provider's refusals (an invalid grant: a used code, a person removed or disabled); anything else is the provider being away.
    if (response.status === 400 || response.status === 401) return { ok: false, error: String(body.error_description ?? body.error ?? response.status) };
    throw unavailable(`the identity provider answered ${response.status}; retry later`);
  }

  private discover(): Promise<Discovery> {
    this.discovery ??= this.reach(`${this.settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`)
      .then(async (response) => {
        if (!response.ok) throw unavailable(`the identity provider's discovery document answered ${response.status}`);
        return (await response.json()) as Discovery;
      })
      .catch((error: unknown) => {
        // Asked again next time: a provider that was away at first is not remembered as away.
        this.discovery = undefined;
        throw error;
      });
    return this.discovery;
  }

  private async reach(url: string, init?: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    } catch (error) {
      throw unavailable(`the identity provider cannot be reached: ${(error as Error).message}`);
    }
  }
}
