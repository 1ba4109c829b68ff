import type { events } from '@ota/proto';
import { timingSafeEqual } from 'node:crypto';
import { permissionDenied, unauthenticated } from '@ota/errors';
import type { Context } from 'koa';
import type { Session, Token } from './model';
import { CSRF_HEADER, SESSION_COOKIE } from './session-cookie';
import type { AccountStore } from './ports';
import type { Role } from './roles';
import type { SignInSessions } from './sign-in';

/** Who is calling, resolved from the bearer token (or the console's session cookie) on every request. */
export interface Principal {
  token: Token;
  /** Personal token: its user. Project and device tokens: the project's owner. */
  userId: string;
  isStaff: boolean;
  /** Set when the caller is the console, signed in with a session cookie. */
  session?: Session;
  /** The groups the person's sign-in carried (single sign-on); roles granted to them apply. */
  groups?: readonly string[];
  /** The caller's role in the project of the request, once the operation table found it. */
  role?: Role;
}

/**
 * Resolves the caller into ctx.state.principal, or answers 401. A bearer token is used when the
 * request carries one; otherwise the console's session cookie, which acts with the personal token
 * it was opened with (so revoking that token ends the session), and whose mutating calls must
 * carry the session's CSRF token.
 */
export async function authenticate(store: AccountStore, ctx: Context, options: { acceptSession: boolean; signIns?: SignInSessions } = { acceptSession: true }): Promise<Principal> {
  const header = ctx.get('authorization');
  let token: Token | null;
  let session: Session | undefined;
  if (!header && !options.acceptSession) {
    // The device API takes bearer tokens only: a console cookie is no credential there (401, as documented).
    throw unauthenticated('missing bearer token');
  } else if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw unauthenticated('missing bearer token');
    token = await store.authenticate(match[1]!);
    if (!token) throw unauthenticated('invalid, revoked or expired token');
  } else {
    const rawSession = ctx.cookies.get(SESSION_COOKIE);
    if (!rawSession) throw unauthenticated('missing bearer token');
    session = (await store.findSession(rawSession)) ?? undefined;
    if (!session) throw unauthenticated('the console session has ended; sign in again');
    if (session.signIn) return signedInPrincipal(store, ctx, session, options.signIns);
    token = await store.authenticateHash(session.tokenHash);
    if (!token) {
      await store.deleteSession(session.hash);
      throw unauthenticated('the token this session was opened with is revoked; sign in again');
    }
    requireCsrfToken(ctx, session);
  }
  let isStaff = false;
  let groups: readonly string[] | undefined;
  if (token.kind === 'personal') {
    const user = await store.findUser(token.userId);
    if (!user) throw unauthenticated('invalid or revoked token');
    isStaff = user.isStaff;
    if (token.signIn) {
      await confirmTokenSignIn(token, options.signIns);
      // A token tied to the single sign-on acts with the groups the provider last gave the person.
      groups = user.signInGroups;
    }
  }
  const principal: Principal = { token, userId: token.userId, isStaff, session, ...(groups ? { groups } : {}) };
  ctx.state.principal = principal;
  return principal;
}

/** A personal token made in a single sign-on session holds while the provider vouches for its person (auth/sign-in.ts). */
export async function confirmTokenSignIn(token: Token, signIns: SignInSessions | undefined): Promise<void> {
  if (!token.signIn) return;
  if (!signIns) throw unauthenticated('this token was made through single sign-on, which is not configured any more; make a new one');
  await signIns.confirmedToken(token as Token & { signIn: NonNullable<Token['signIn']> });
}

/**
 * The principal of a single sign-on session: the person, with the groups the provider last gave
 * them, once the session is confirmed (auth/sign-in.ts). It carries a token of its own making, so
 * that rate limits and the audit name the session, never a personal token.
 */
async function signedInPrincipal(store: AccountStore, ctx: Context, session: Session, signIns: SignInSessions | undefined): Promise<Principal> {
  if (!signIns) {
    await store.deleteSession(session.hash);
    throw unauthenticated('single sign-on is not configured any more; sign in with a personal token');
  }
  const confirmed = await signIns.confirmed(session);
  requireCsrfToken(ctx, confirmed);
  const user = await store.findUser(confirmed.userId);
  if (!user) throw unauthenticated('the console session has ended; sign in again');
  const token: Token = {
    hash: '',
    id: `sso-${confirmed.hash.slice(0, 24)}`,
    prefix: 'sso',
    kind: 'personal',
    scope: '',
    role: null,
    name: 'single sign-on',
    userId: user.id,
    projectId: '',
    deviceUuid: '',
    deviceId: '',
    createdBy: user.id,
    expiresAt: confirmed.expiresAt,
    signIn: null,
    createdAt: confirmed.createdAt,
    lastUsedAt: null,
    revokedAt: null,
  };
  const principal: Principal = { token, userId: user.id, isStaff: user.isStaff, session: confirmed, groups: confirmed.signIn!.groups };
  ctx.state.principal = principal;
  return principal;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function requireCsrfToken(ctx: Context, session: Session): void {
  if (!SAFE_METHODS.has(ctx.method) && !sameSecret(ctx.get(CSRF_HEADER), session.csrfToken)) {
    throw permissionDenied(`a call made with the console session must carry its CSRF token in ${CSRF_HEADER}`);
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function principalOf(ctx: Context): Principal {
  return ctx.state.principal as Principal;
}

/** Developer API: personal tokens and `api`-scope project tokens; anything else is a 401 (docs/api.md, "Tokens and who may call what"). */
export function requireDeveloperToken(ctx: Context): Principal {
  const principal = principalOf(ctx);
  const { kind, scope } = principal.token;
  if (kind === 'personal' || (kind === 'project' && scope === 'api')) return principal;
  throw unauthenticated('this token cannot call the developer API');
}

/** Project create/delete: personal tokens only; a project token is a valid credential, so 403. */
export function requirePersonalToken(ctx: Context): Principal {
  const principal = requireDeveloperToken(ctx);
  if (principal.token.kind !== 'personal') throw permissionDenied('this endpoint requires a personal API token');
  return principal;
}

/** Staff-only endpoints: a staff user's personal token; other valid credentials get 403. */
export function requireStaff(ctx: Context): Principal {
  const principal = requirePersonalToken(ctx);
  if (!principal.isStaff) throw permissionDenied('this endpoint is for staff only');
  return principal;
}

/** Device API: `device`-scope project tokens and device tokens. */
export function requireDeviceToken(ctx: Context): Principal {
  const principal = principalOf(ctx);
  const { kind, scope } = principal.token;
  if (kind === 'device' || (kind === 'project' && scope === 'device')) return principal;
  throw unauthenticated('this token cannot call the device API');
}

/**
 * Who an audit event names as the actor: the person of a personal token, or the project token;
 * with the role it acted with and how it signed in (docs/api.md, "Roles").
 */
export function auditActorOf(principal: Principal): Pick<events.AuditRecorded, 'actorType' | 'actorId' | 'tokenPrefix' | 'actorRole' | 'actorVia'> {
  return {
    actorType: principal.token.kind === 'personal' ? 'user' : 'project_token',
    actorId: principal.token.kind === 'personal' ? principal.userId : principal.token.id,
    tokenPrefix: principal.token.prefix,
    actorRole: principal.role ?? '',
    actorVia: principal.token.kind !== 'personal' ? 'project_token' : principal.session?.signIn ? 'sso_session' : principal.session ? 'console_session' : 'personal_token',
  };
}
