import { invalidArgument, notFound } from '@ota/errors';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { tokenJson } from '../http/present';
import * as R from '../http/response-schemas';
import { createPersonalTokenBody, createProjectTokenBody } from '../http/schemas';
import { pathId } from './context';

export function tokenRoutes(table: OperationTable, deps: GatewayDeps): void {
  const personalTokens = table.section({ tag: 'Tokens', access: 'personal' });
  const projectTokens = table.section({ tag: 'Tokens', access: 'developer' });
  const { store, audit } = deps;

  personalTokens.add(
    {
      route: 'GET /me/tokens/',
      operationId: 'listPersonalTokens',
      summary: 'List your personal tokens',
      description: 'Revoked tokens are listed too, with `revoked_at` and the `last_used_at` they had.',
      responses: { 200: R.arrayOf(R.Token) },
    },
    async (ctx, { principal }) => {
      ctx.body = (await store.listTokens({ userId: principal.userId, kind: 'personal' })).map((token) => tokenJson(token));
    },
  );

  personalTokens.add(
    {
      route: 'POST /me/tokens/',
      operationId: 'createPersonalToken',
      summary: 'Create a personal token',
      description: 'The raw `token` is in this answer only; it is stored as a SHA-256 hash.',
      body: createPersonalTokenBody,
      responses: { 201: R.TokenCreated },
    },
    async (ctx, { principal, body }) => {
      const { token, raw } = await store.createToken({ kind: 'personal', scope: '', role: null, name: body.name, userId: principal.userId, projectId: '', deviceUuid: '', deviceId: '' });
      ctx.status = 201;
      ctx.body = tokenJson(token, raw);
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
      description: 'Names, prefixes and roles only; a token is shown whole once, when it is made.',
      project: 'viewer',
      responses: { 200: R.arrayOf(R.Token) },
    },
    async (ctx, { project }) => {
      ctx.body = (await store.listTokens({ projectId: project.id, kind: 'project' })).map((token) => tokenJson(token));
    },
  );

  projectTokens.add(
    {
      route: 'POST /projects/:id/tokens/',
      operationId: 'createProjectToken',
      summary: 'Create a project token',
      description: '`device` scope may only call the device API; `api` scope only the developer API. Never flash an `api` token onto devices.',
      project: 'admin',
      body: createProjectTokenBody,
      responses: { 201: R.TokenCreated },
    },
    async (ctx, { project, principal, body }) => {
      if (body.scope === 'device' && body.role) throw invalidArgument('a device-scope token takes no role: it only checks and reports for devices');
      const { token, raw } = await store.createToken({
        kind: 'project',
        scope: body.scope,
        // An `api` token acts in the project with its role; a `device` token only checks and reports.
        role: body.scope === 'api' ? (body.role ?? 'admin') : null,
        name: body.name,
        userId: project.ownerId,
        projectId: project.id,
        deviceUuid: '',
        deviceId: '',
      });
      await audit.record(principal, {
        projectId: project.id,
        action: 'token.created',
        targetType: 'token',
        targetId: token.id,
        details: { scope: body.scope, prefix: token.prefix, name: body.name, ...(token.role ? { role: token.role } : {}) },
      });
      ctx.status = 201;
      ctx.body = tokenJson(token, raw);
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
