import type { Invitation, Plan, RoleGrant, Session, Token, User } from './model';

/** One sign-in through the identity provider, between the redirect there and the way back. */
export interface SignInAttempt {
  state: string;
  nonce: string;
  codeVerifier: string;
  createdAt: Date;
}

/** What the caller decides of a new token; its secret, hash, id and prefix are made by the store. */
export type NewToken = Pick<Token, 'kind' | 'scope' | 'role' | 'name' | 'userId' | 'projectId' | 'deviceUuid' | 'deviceId' | 'createdBy' | 'expiresAt' | 'signIn'>;

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
  /** Keeps the groups of the person's latest single sign-on (what their tokens' roles are judged by). */
  setSignInGroups(userId: string, groups: readonly string[]): Promise<void>;
  /** The raw token is returned once, to be shown to the caller; only its hash is kept. */
  createToken(input: NewToken): Promise<{ token: Token; raw: string }>;
  /** The live token of a raw token, or null: a revoked or expired token stops working on the very next request. */
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
  /** Revokes the live `api` project tokens `userId` made in the project (a fleet's tokens stay); answers how many. */
  revokeTokensMadeBy(projectId: string, userId: string): Promise<number>;
  /** A single sign-on token's next confirmation, after the provider vouched again. */
  updateTokenSignIn(hash: string, signIn: NonNullable<Token['signIn']>): Promise<void>;
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
  /** Every grant and invitation of the project: used when the project is deleted. */
  deleteGrants(projectId: string): Promise<void>;
  /** Offers the role to the e-mail, in place of any invitation it had to the project. */
  saveInvitation(invitation: Invitation): Promise<void>;
  /** The project's open invitations, in the order made. */
  listInvitations(projectId: string): Promise<Invitation[]>;
  /** The open invitations to this e-mail, in any project. */
  invitationsTo(email: string): Promise<Invitation[]>;
  /** The invitation of the e-mail to the project, once: deleted as it is read; null when there is none. */
  takeInvitation(projectId: string, email: string): Promise<Invitation | null>;
  /** Answers whether there was an invitation to delete. */
  deleteInvitation(projectId: string, email: string): Promise<boolean>;
  /** People whose latest single sign-on carried the group: who holds a group's role, as last seen. */
  usersInGroup(group: string): Promise<User[]>;
}
