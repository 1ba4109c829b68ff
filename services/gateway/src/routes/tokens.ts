import { invalidArgument, notFound } from '@ota/errors';
import type { Token, User } from '../auth/model';
import type { Principal } from '../auth/principal';
import { requireRole, ROLES } from '../auth/roles';
import { personalTokenExpiry } from '../auth/tokens';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { tokenJson } from '../http/present';
import * as R from '../http/response-schemas';
import { createPersonalTokenBody, createProjectTokenBody, TOKEN_MAX_DAYS } from '../http/schemas';
import { pathId } from './context';

export function tokenRoutes(table: OperationTable, deps: GatewayDeps): void {
  const personalTokens = table.section({ tag: 'Tokens', access: 'personal' });
  const projectTokens = table.section({ tag: 'Tokens', access: 'developer' });
  const { store, audit, config } = deps;

  /** Tokens as the API lists them, each with its maker read once. */
  async function listed(tokens: Token[]) {
    const makerIds = [...new Set(tokens.map((token) => token.createdBy).filter(Boolean))];
    const makers = new Map<string, User | null>(await Promise.all(makerIds.map(async (id) => [id, await store.findUser(id)] as const)));
    return tokens.map((token) => tokenJson(token, makers.get(token.createdBy) ?? null));
  }

  personalTokens.add(
    {
      route: 'GET /me/tokens/',
      operationId: 'listPersonalTokens',
      summary: 'List your personal tokens',
      description: 'Revoked and expired tokens are listed too, with `revoked_at`, `expires_at` and the `last_used_at` they had.',
      responses: { 200: R.arrayOf(R.Token) },
    },
    async (ctx, { principal }) => {
      ctx.body = await listed(await store.listTokens({ userId: principal.userId, kind: 'personal' }));
    },
  );

  personalTokens.add(
    {
      route: 'POST /me/tokens/',
      operationId: 'createPersonalToken',
      summary: 'Create a personal token',
      description:
        'The raw `token` is in this answer only; it is stored as a SHA-256 hash. It expires at `expires_at`, by default in `PERSONAL_TOKEN_TTL_DAYS` (90 days). One made in a single sign-on session works only while the identity provider vouches for its person, asked as the session is (docs/security.md, "Tokens outlive no one").',
      body: createPersonalTokenBody,
      responses: { 201: R.TokenCreated },
    },
    async (ctx, { principal, body }) => {
      const expiresAt = body.expires_at === undefined ? personalTokenExpiry(config.PERSONAL_TOKEN_TTL_DAYS) : expiryOf(body.expires_at);
      const signIn = principal.session?.signIn && deps.signIn ? await deps.signIn.sessions.tieToken(principal.session) : null;
      const { token, raw } = await store.createToken({
        kind: 'personal',
        scope: '',
        role: null,
        name: body.name,
        userId: principal.userId,
        projectId: '',
        deviceUuid: '',
        deviceId: '',
        createdBy: principal.userId,
        expiresAt,
        signIn,
      });
      ctx.status = 201;
      ctx.body = tokenJson(token, await store.findUser(principal.userId), raw);
    },
  );

  personalTokens.add(
    {
      route: 'DELETE /me/tokens/:tid/',
      operationId: 'revokePersonalToken',
      summary: 'Revoke a personal token',
      description: 'Takes effect on the next request.',
      responses: { 204: null },
    },
    async (ctx, { principal }) => {
      const token = await store.findToken(pathId(ctx, 'tid', 'token'));
      if (!token || token.kind !== 'personal' || token.userId !== principal.userId) throw notFound('token not found');
      await store.revokeToken(token);
      ctx.status = 204;
    },
  );

  projectTokens.add(
    {
      route: 'GET /projects/:id/tokens/',
      operationId: 'listProjectTokens',
      summary: 'List project tokens',
      description: 'Names, prefixes, roles and makers only; a token is shown whole once, when it is made.',
      project: 'viewer',
      responses: { 200: R.arrayOf(R.Token) },
    },
    async (ctx, { project }) => {
      ctx.body = await listed(await store.listTokens({ projectId: project.id, kind: 'project' }));
    },
  );

  projectTokens.add(
    {
      route: 'POST /projects/:id/tokens/',
      operationId: 'createProjectToken',
      summary: 'Create a project token',
      description:
        '`device` scope may only call the device API; `api` scope only the developer API, with the `role` it is given (needed), and never more than its maker holds in the project at the time of each call: removing the maker from the project revokes it. Never flash an `api` token onto devices.',
      project: 'admin',
      body: createProjectTokenBody,
      responses: { 201: R.TokenCreated },
    },
    async (ctx, { project, principal, role, body }) => {
      if (body.scope === 'device' && body.role) throw invalidArgument('a device-scope token takes no role: it only checks and reports for devices');
      if (body.scope === 'api' && !body.role) throw invalidArgument(`an api token needs a role: ${ROLES.join(', ').replace(/, (?=[^,]*$)/, ' or ')}`);
      // A token is its maker's: it may hold no more than they do here.
      if (body.role) requireRole(role, body.role, `Making a token with the ${body.role} role`);
      const maker = makerOf(principal, project.ownerId);
      const { token, raw } = await store.createToken({
        kind: 'project',
        scope: body.scope,
        // An `api` token acts in the project with its role; a `device` token only checks and reports.
        role: body.scope === 'api' ? body.role! : null,
        name: body.name,
        userId: project.ownerId,
        projectId: project.id,
        deviceUuid: '',
        deviceId: '',
        createdBy: maker,
        expiresAt: body.expires_at === undefined ? null : expiryOf(body.expires_at),
        signIn: null,
      });
      await audit.record(principal, {
        projectId: project.id,
        action: 'token.created',
        targetType: 'token',
        targetId: token.id,
        details: { scope: body.scope, prefix: token.prefix, name: body.name, ...(token.role ? { role: token.role } : {}), ...(token.expiresAt ? { expires_at: token.expiresAt.toISOString() } : {}) },
      });
      ctx.status = 201;
      ctx.body = tokenJson(token, await store.findUser(maker), raw);
    },
  );

  projectTokens.add(
    {
      route: 'DELETE /projects/:id/tokens/:tid/',
      operationId: 'revokeProjectToken',
      summary: 'Revoke a project token',
      project: 'admin',
      responses: { 204: null },
    },
    async (ctx, { project, principal }) => {
      const token = await store.findToken(pathId(ctx, 'tid', 'token'));
      if (!token || token.kind !== 'project' || token.projectId !== project.id) throw notFound('token not found');
      await store.revokeToken(token);
      await audit.record(principal, {
        projectId: project.id,
        action: 'token.revoked',
        targetType: 'token',
        targetId: token.id,
        details: { prefix: token.prefix },
      });
      ctx.status = 204;
    },
  );
}

/** The person a new project token is made by: the caller, or the maker of the token that calls (a token made before makers were recorded is the owner's). */
function makerOf(principal: Principal, ownerId: string): string {
  if (principal.token.kind === 'personal') return principal.userId;
  return principal.token.createdBy || ownerId;
}

/** A token's expiry as asked: null (never), or a time ahead, at most TOKEN_MAX_DAYS away. */
function expiryOf(text: string | null): Date | null {
  if (text === null) return null;
  const at = new Date(text);
  const now = Date.now();
  if (at.getTime() <= now) throw invalidArgument('expires_at must be ahead of now');
  if (at.getTime() > now + TOKEN_MAX_DAYS * 86_400_000) throw invalidArgument(`expires_at may be at most ${TOKEN_MAX_DAYS} days ahead`);
  return at;
}
