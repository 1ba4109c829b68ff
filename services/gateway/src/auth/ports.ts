import type { Plan, RoleGrant, Session, Token, User } from './model';

/** One sign-in through the identity provider, between the redirect there and the way back. */
export interface SignInAttempt {
  state: string;
  nonce: string;
  codeVerifier: string;
  createdAt: Date;
}

/** What the caller decides of a new token; its secret, hash, id and prefix are made by the store. */
export type NewToken = Pick<Token, 'kind' | 'scope' | 'role' | 'name' | 'userId' | 'projectId' | 'deviceUuid' | 'deviceId'>;

/**
 * The gateway's own storage port: users and their plans, tokens of every kind, console sessions.
 * `adapters/mongo` implements it.
 */
export interface AccountStore {
  /** A user whose e-mail is taken is ALREADY_EXISTS. */
  createUser(email: string, isStaff: boolean, plan: Plan): Promise<User>;
  /** Sets the caps given; a user that does not exist is NOT_FOUND. */
  setPlan(email: string, plan: Partial<Plan>): Promise<User>;
  findUser(id: string): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  /** The raw token is returned once, to be shown to the caller; only its hash is kept. */
  createToken(input: NewToken): Promise<{ token: Token; raw: string }>;
  /** The live token of a raw token, or null: a revoked token stops working on the very next request. */
  authenticate(raw: string): Promise<Token | null>;
  /** `authenticate` for a token known by its hash (a console session's token). */
  authenticateHash(tokenHash: string): Promise<Token | null>;
  /** Opens a console session for a personal token; the raw session id is returned once, for the cookie. */
  createSession(token: Token, ttlSeconds: number): Promise<{ session: Session; raw: string }>;
  /** Opens a console session for a person signed in through the identity provider. */
  createSignInSession(userId: string, signIn: NonNullable<Session['signIn']>, ttlSeconds: number): Promise<{ session: Session; raw: string }>;
  updateSessionSignIn(hash: string, signIn: NonNullable<Session['signIn']>): Promise<void>;
  /** Keeps a sign-in's state, nonce and PKCE verifier until the provider sends the browser back. */
  saveSignInAttempt(attempt: SignInAttempt): Promise<void>;
  /** The attempt of this state, once: it is deleted as it is read; null when unknown or older than `maxAgeSeconds`. */
  takeSignInAttempt(state: string, maxAgeSeconds: number): Promise<SignInAttempt | null>;
  /** The live session for a raw session id; an expired one is deleted and not returned. */
  findSession(raw: string): Promise<Session | null>;
  /** Ends the session whose hash this is. */
  deleteSession(hash: string): Promise<void>;
  listTokens(filter: { userId: string; kind: 'personal' } | { projectId: string; kind: 'project' }): Promise<Token[]>;
  findToken(id: string): Promise<Token | null>;
  /** Revocation keeps the record, so last_used_at stays readable afterwards. */
  revokeToken(token: Token): Promise<void>;
  /** Every project and device token of the project: used when the project is deleted. */
  revokeProjectTokens(projectId: string): Promise<void>;
  /** Answers how many live tokens it revoked. */
  revokeDeviceTokens(deviceUuid: string): Promise<number>;
  /** Grants the role, in place of any the same subject held in the project. */
  grantRole(grant: RoleGrant): Promise<void>;
  /** False when the subject held no role there. */
  revokeRole(projectId: string, subject: RoleGrant['subject']): Promise<boolean>;
  /** The project's grants, people first, each kind in the order granted. */
  listGrants(projectId: string): Promise<RoleGrant[]>;
  /** The grants, in any project, to this person or to any of these groups. */
  grantsTo(userId: string, groups: readonly string[]): Promise<RoleGrant[]>;
  /** Every grant of the project: used when the project is deleted. */
  deleteGrants(projectId: string): Promise<void>;
}
