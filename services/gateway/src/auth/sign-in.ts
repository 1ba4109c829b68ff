import { unauthenticated } from '@ota/errors';
import type { AccountStore } from './ports';
import type { Session, Token, TokenSignIn } from './model';

/** A person as the identity provider vouches for them (docs/operations.md, "Single sign-on"). */
export interface SignedInIdentity {
  /** The provider's subject: stable for the person at that provider. */
  subject: string;
  email: string;
  /** The groups of the configured claim (OIDC_GROUPS_CLAIM); roles granted to them apply. */
  groups: string[];
}

export interface SignInTokens {
  identity: SignedInIdentity;
  /** Kept with the session, to ask the provider again whether the person may still sign in. */
  refreshToken: string;
  /** The ID token of the sign-in, kept to end the provider's session with it (RP-initiated logout). */
  idToken: string;
}

/** The OpenID provider, as the gateway's single sign-on needs it (adapters/oidc implements it). */
export interface IdentityProvider {
  /** Where to send the browser: the provider's sign-in, for the authorization code flow with PKCE. */
  authorizationUrl(request: { state: string; nonce: string; codeVerifier: string; redirectUri: string }): Promise<string>;
  /**
   * The person the code signs in, from an ID token checked against the provider's keys, its
   * issuer, this client as audience, its expiry and the sign-in's nonce; anything else is 401.
   */
  signIn(request: { code: string; codeVerifier: string; redirectUri: string; nonce: string }): Promise<SignInTokens>;
  /** Whether the person may still sign in: their identity now, or null when the provider refuses (removed, disabled, signed out). */
  confirm(refreshToken: string): Promise<SignInTokens | null>;
  /**
   * Where to send the browser to end the person's session at the provider too (OpenID Connect
   * RP-initiated logout), coming back to `returnTo`; null when the provider offers none.
   */
  logoutUrl(request: { idToken: string; returnTo: string }): Promise<string | null>;
}

/**
 * A single sign-on session acts for `confirmSeconds` at a time; then its next request asks the
 * provider again, so a person removed or disabled there loses access within that time, and the
 * groups they hold there are brought up to date. A refused confirmation ends the session (401).
 */
export class SignInSessions {
  constructor(
    private readonly store: Pick<AccountStore, 'updateSessionSignIn' | 'deleteSession' | 'setSignInGroups' | 'updateTokenSignIn' | 'revokeToken'>,
    private readonly provider: IdentityProvider,
    private readonly confirmSeconds: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async confirmed(session: Session): Promise<Session> {
    const signIn = session.signIn!;
    if (signIn.confirmAt > this.now()) return session;
    const confirmed = await this.provider.confirm(signIn.refreshToken);
    if (!confirmed) {
      await this.store.deleteSession(session.hash);
      throw unauthenticated('the identity provider no longer signs this person in; sign in again');
    }
    const renewed = { refreshToken: confirmed.refreshToken, groups: confirmed.identity.groups, confirmAt: this.nextConfirmation(), idToken: confirmed.idToken || signIn.idToken };
    await Promise.all([this.store.updateSessionSignIn(session.hash, renewed), this.store.setSignInGroups(session.userId, confirmed.identity.groups)]);
    return { ...session, signIn: renewed };
  }

  /**
   * The tie of a personal token made in this single sign-on session: a refresh token of its own,
   * asked of the provider now, so that the token is confirmed as the session is and stops when
   * the provider stops vouching for the person (docs/security.md, "Tokens outlive no one").
   */
  async tieToken(session: Session): Promise<TokenSignIn> {
    const confirmed = await this.provider.confirm(session.signIn!.refreshToken);
    if (!confirmed) {
      await this.store.deleteSession(session.hash);
      throw unauthenticated('the identity provider no longer signs this person in; sign in again');
    }
    return { refreshToken: confirmed.refreshToken, confirmAt: this.nextConfirmation() };
  }

  /**
   * Confirms a token tied to a single sign-on, once its time is due: a refusal revokes it for good
   * (401); a confirmation keeps the person's groups up to date, which the token acts with.
   */
  async confirmedToken(token: Token & { signIn: TokenSignIn }): Promise<void> {
    if (token.signIn.confirmAt > this.now()) return;
    const confirmed = await this.provider.confirm(token.signIn.refreshToken);
    if (!confirmed) {
      await this.store.revokeToken(token);
      throw unauthenticated('the identity provider no longer vouches for the person this token was made by; it is revoked');
    }
    await Promise.all([
      this.store.updateTokenSignIn(token.hash, { refreshToken: confirmed.refreshToken, confirmAt: this.nextConfirmation() }),
      this.store.setSignInGroups(token.userId, confirmed.identity.groups),
    ]);
  }

  private nextConfirmation(): Date {
    return new Date(this.now().getTime() + this.confirmSeconds * 1000);
  }
}
