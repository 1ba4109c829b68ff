import { unauthenticated } from '@ota/errors';
import type { AccountStore } from './ports';
import type { Session } from './model';

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
}

/**
 * A single sign-on session acts for `confirmSeconds` at a time; then its next request asks the
 * provider again, so a person removed or disabled there loses access within that time, and the
 * groups they hold there are brought up to date. A refused confirmation ends the session (401).
 */
export class SignInSessions {
  constructor(
    private readonly store: Pick<AccountStore, 'updateSessionSignIn' | 'deleteSession'>,
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
    const renewed = { refreshToken: confirmed.refreshToken, groups: confirmed.identity.groups, confirmAt: new Date(this.now().getTime() + this.confirmSeconds * 1000) };
    await this.store.updateSessionSignIn(session.hash, renewed);
    return { ...session, signIn: renewed };
  }
}
