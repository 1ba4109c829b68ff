import type { Context } from 'koa';
import { HttpError } from '../http/errors';
import type { TokenDoc } from '../stores/models';
import type { GatewayStore } from '../stores/gateway-store';

/** Who is calling, resolved from the bearer token on every request. */
export interface Principal {
  token: TokenDoc;
  /** Personal token: its user. Project and device tokens: the project's owner. */
  userId: string;
  isStaff: boolean;
}

/** Resolves the bearer token of the request into ctx.state.principal, or answers 401. */
export async function authenticate(store: GatewayStore, ctx: Context): Promise<Principal> {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) throw new HttpError(401, 'missing bearer token', { 'WWW-Authenticate': 'Bearer' });
  const token = await store.authenticate(match[1]!);
  if (!token) throw new HttpError(401, 'invalid or revoked token', { 'WWW-Authenticate': 'Bearer' });
  let isStaff = false;
  if (token.kind === 'personal') {
    const user = await store.findUser(token.user_id);
    if (!user) throw new HttpError(401, 'invalid or revoked token');
    isStaff = user.is_staff;
  }
  const principal: Principal = { token, userId: token.user_id, isStaff };
  ctx.state.principal = principal;
  return principal;
}

export function principalOf(ctx: Context): Principal {
  return ctx.state.principal as Principal;
}

/** Developer API: personal tokens and `api`-scope project tokens; anything else is a 401 (spec 5.9). */
export function requireDeveloperToken(ctx: Context): Principal {
  const principal = principalOf(ctx);
  const { kind, scope } = principal.token;
  if (kind === 'personal' || (kind === 'project' && scope === 'api')) return principal;
  throw new HttpError(401, 'this token cannot call the developer API');
}

/** Project create/delete: personal tokens only; a project token is a valid credential, so 403. */
export function requirePersonalToken(ctx: Context): Principal {
  const principal = requireDeveloperToken(ctx);
  if (principal.token.kind !== 'personal') throw new HttpError(403, 'this endpoint requires a personal API token');
  return principal;
}

/** Staff-only endpoints: a staff user's personal token; other valid credentials get 403. */
export function requireStaff(ctx: Context): Principal {
  const principal = requirePersonalToken(ctx);
  if (!principal.isStaff) throw new HttpError(403, 'this endpoint is for staff only');
  return principal;
}

/** Device API: `device`-scope project tokens and device tokens. */
export function requireDeviceToken(ctx: Context): Principal {
  const principal = principalOf(ctx);
  const { kind, scope } = principal.token;
  if (kind === 'device' || (kind === 'project' && scope === 'device')) return principal;
  throw new HttpError(401, 'this token cannot call the device API');
}
