import { invalidArgument, notFound } from '@ota/errors';
import type { RoleGrant } from '../auth/model';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import * as R from '../http/response-schemas';
import { grantRoleBody } from '../http/schemas';
import { pathId } from './context';

/** Who holds which role in a project (docs/api.md, "Roles"): the owner, and the grants an admin makes. */
export function memberRoutes(table: OperationTable, deps: GatewayDeps): void {
  const api = table.section({ tag: 'Members and roles', access: 'developer' });
  const { store, audit } = deps;

  api.add(
    {
      route: 'GET /projects/:id/members/',
      operationId: 'listMembers',
      summary: 'List who holds a role in the project',
      description: 'The owner first (an admin), then the roles granted to people, then those granted to groups of the sign-in, each in the order granted.',
      project: 'viewer',
      responses: { 200: R.arrayOf(R.ProjectMember) },
    },
    async (ctx, { project }) => {
      const [owner, grants] = await Promise.all([store.findUser(project.ownerId), store.listGrants(project.id)]);
      const people = await Promise.all(grants.map((grant) => (grant.subject.kind === 'user' ? store.findUser(grant.subject.userId) : null)));
      ctx.body = [
        { kind: 'owner', user_id: project.ownerId, email: owner?.email ?? '', role: 'admin', granted_at: null },
        ...grants.map((grant, index) =>
          grant.subject.kind === 'user'
            ? { kind: 'user', user_id: grant.subject.userId, email: people[index]?.email ?? '', role: grant.role, granted_at: grant.grantedAt.toISOString() }
            : { kind: 'group', group: grant.subject.group, role: grant.role, granted_at: grant.grantedAt.toISOString() },
        ),
      ];
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/members/',
      operationId: 'grantRole',
      summary: 'Grant a role to a person or a group',
      description: 'Replaces any role the person or group held in the project. The owner is always an admin (400). A person is named by e-mail and must exist (404).',
      project: 'admin',
      body: grantRoleBody,
      responses: { 200: R.ProjectMember },
      errors: [404],
    },
    async (ctx, { project, principal, body }) => {
      if (Boolean(body.email) === Boolean(body.group)) throw invalidArgument('name exactly one of email and group');
      let subject: RoleGrant['subject'];
      let email: string | undefined;
      if (body.email) {
        const user = await store.findUserByEmail(body.email);
        if (!user) throw notFound(`no user with e-mail ${body.email}`);
        if (user.id === project.ownerId) throw invalidArgument('the owner is an admin of the project, always');
        subject = { kind: 'user', userId: user.id };
        email = user.email;
      } else {
        subject = { kind: 'group', group: body.group! };
      }
      const grant: RoleGrant = { projectId: project.id, subject, role: body.role, grantedAt: new Date(), grantedBy: principal.token.kind === 'personal' ? principal.userId : principal.token.id };
      await store.grantRole(grant);
      await audit.record(principal, { projectId: project.id, action: 'member.granted', targetType: 'member', targetId: subjectId(subject), details: { role: body.role, ...(email ? { email } : { group: body.group }) } });
      ctx.body =
        subject.kind === 'user'
          ? { kind: 'user', user_id: subject.userId, email: email!, role: grant.role, granted_at: grant.grantedAt.toISOString() }
          : { kind: 'group', group: subject.group, role: grant.role, granted_at: grant.grantedAt.toISOString() };
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/members/users/:uid/',
      operationId: 'revokeUserRole',
      summary: "Revoke a person's role",
      description: 'The person keeps any role a group of their sign-in holds. Their open console sessions act with what remains from their next request on.',
      project: 'admin',
      responses: { 204: null },
      errors: [404],
    },
    async (ctx, { project, principal }) => {
      const subject = { kind: 'user', userId: pathId(ctx, 'uid', 'member') } as const;
      if (!(await store.revokeRole(project.id, subject))) throw notFound('member not found');
      await audit.record(principal, { projectId: project.id, action: 'member.revoked', targetType: 'member', targetId: subjectId(subject), details: {} });
      ctx.status = 204;
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/members/groups/:group/',
      operationId: 'revokeGroupRole',
      summary: "Revoke a group's role",
      project: 'admin',
      responses: { 204: null },
      errors: [404],
    },
    async (ctx, { project, principal }) => {
      const subject = { kind: 'group', group: ctx.params.group as string } as const;
      if (!(await store.revokeRole(project.id, subject))) throw notFound('member not found');
      await audit.record(principal, { projectId: project.id, action: 'member.revoked', targetType: 'member', targetId: subjectId(subject), details: { group: subject.group } });
      ctx.status = 204;
    },
  );
}

function subjectId(subject: RoleGrant['subject']): string {
  return subject.kind === 'user' ? `user:${subject.userId}` : `group:${subject.group}`;
}
