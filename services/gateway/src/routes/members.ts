import { conflict, invalidArgument, isDomainError, notFound, permissionDenied } from '@ota/errors';
import type { registry } from '@ota/proto';
import type { Invitation, RoleGrant } from '../auth/model';
import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import * as R from '../http/response-schemas';
import { grantRoleBody } from '../http/schemas';
import { pathId, rpc } from './context';

/**
 * Who holds a role in a project (docs/api.md, "Roles"): the owner, the grants an admin makes, and
 * the invitations that become grants when their person accepts them.
 */
export function memberRoutes(table: OperationTable, deps: GatewayDeps): void {
  const api = table.section({ tag: 'Members and roles', access: 'developer' });
  const mine = table.section({ tag: 'Members and roles', access: 'personal' });
  const { store, audit, clients } = deps;

  api.add(
    {
      route: 'GET /projects/:id/members/',
      operationId: 'listMembers',
      summary: 'List who holds a role in the project',
      description:
        'The owner first (an admin), then the roles granted to people, then those granted to groups of the sign-in (each with `holders`: the people whose latest single sign-on carried the group), then the open invitations, each in the order made.',
      project: 'viewer',
      responses: { 200: R.arrayOf(R.ProjectMember) },
    },
    async (ctx, { project }) => {
      const [owner, grants, invitations] = await Promise.all([store.findUser(project.ownerId), store.listGrants(project.id), store.listInvitations(project.id)]);
      const people = await Promise.all(grants.map((grant) => (grant.subject.kind === 'user' ? store.findUser(grant.subject.userId) : null)));
      const holders = await Promise.all(grants.map((grant) => (grant.subject.kind === 'group' ? store.usersInGroup(grant.subject.group) : [])));
      ctx.body = [
        { kind: 'owner', user_id: project.ownerId, email: owner?.email ?? '', role: 'admin', granted_at: null },
        ...grants.map((grant, index) =>
          grant.subject.kind === 'user'
            ? { kind: 'user', user_id: grant.subject.userId, email: people[index]?.email ?? '', role: grant.role, granted_at: grant.grantedAt.toISOString() }
            : { kind: 'group', group: grant.subject.group, role: grant.role, granted_at: grant.grantedAt.toISOString(), holders: holders[index]!.map((user) => user.email) },
        ),
        ...invitations.map(invitationJson),
      ];
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/members/',
      operationId: 'grantRole',
      summary: 'Grant a role to a group, or invite a person by e-mail',
      description:
        "A group's role applies at once, in place of any it held. A person is invited: the answer is 202 and the same whether or not anyone has that address (docs/api.md, \"Invitations\"), and the role takes effect when they accept it. A person who already holds a role of their own here has it changed at once (200). The owner is always an admin (400). A group no single sign-on has carried yet is 409 unless `confirm_unseen_group` is sent.",
      project: 'admin',
      body: grantRoleBody,
      responses: { 200: R.ProjectMember, 202: R.ProjectMember },
      errors: [409],
    },
    async (ctx, { project, principal, body }) => {
      if (Boolean(body.email) === Boolean(body.group)) throw invalidArgument('name exactly one of email and group');
      const by = principal.token.kind === 'personal' ? principal.userId : principal.token.id;
      const grantedAt = new Date();
      if (body.group) {
        const holders = await store.usersInGroup(body.group);
        // A group no sign-in ever carried is most often a typo, or one the provider does not send.
        if (holders.length === 0 && !body.confirm_unseen_group) {
          throw conflict(`no one has signed in with the group "${body.group}" yet (a typo, or a group the identity provider does not send?): send confirm_unseen_group: true to grant it anyway`);
        }
        const grant: RoleGrant = { projectId: project.id, subject: { kind: 'group', group: body.group }, role: body.role, grantedAt, grantedBy: by };
        await store.grantRole(grant);
        await audit.record(principal, { projectId: project.id, action: 'member.granted', targetType: 'member', targetId: subjectId(grant.subject), details: { role: body.role, group: body.group } });
        ctx.body = { kind: 'group', group: body.group, role: body.role, granted_at: grantedAt.toISOString(), holders: holders.map((user) => user.email) };
        return;
      }
      const email = body.email!.toLowerCase();
      const [owner, person, grants] = await Promise.all([store.findUser(project.ownerId), store.findUserByEmail(email), store.listGrants(project.id)]);
      if (owner?.email === email) throw invalidArgument('the owner is an admin of the project, always');
      // A member already (whom the members list shows anyway): the change is theirs at once.
      if (person && grants.some((grant) => grant.subject.kind === 'user' && grant.subject.userId === person.id)) {
        const subject = { kind: 'user', userId: person.id } as const;
        await store.grantRole({ projectId: project.id, subject, role: body.role, grantedAt, grantedBy: by });
        await audit.record(principal, { projectId: project.id, action: 'member.granted', targetType: 'member', targetId: subjectId(subject), details: { role: body.role, email } });
        ctx.body = { kind: 'user', user_id: person.id, email, role: body.role, granted_at: grantedAt.toISOString() };
        return;
      }
      const invitation: Invitation = { projectId: project.id, email, role: body.role, invitedAt: grantedAt, invitedBy: by };
      await store.saveInvitation(invitation);
      await audit.record(principal, { projectId: project.id, action: 'member.invited', targetType: 'member', targetId: `invitation:${email}`, details: { role: body.role, email } });
      ctx.status = 202;
      ctx.body = invitationJson(invitation);
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/members/users/:uid/',
      operationId: 'revokeUserRole',
      summary: "Revoke a person's role",
      description:
        'The person keeps any role a group of their sign-in holds. Their open console sessions act with what remains from their next request on, and the `api` project tokens they made are revoked (the audit counts them).',
      project: 'admin',
      responses: { 204: null },
      errors: [404],
    },
    async (ctx, { project, principal }) => {
      const subject = { kind: 'user', userId: pathId(ctx, 'uid', 'member') } as const;
      if (!(await store.revokeRole(project.id, subject))) throw notFound('member not found');
      // What they made goes with them: their tokens would otherwise act for someone who left.
      const [tokensRevoked, person] = await Promise.all([store.revokeTokensMadeBy(project.id, subject.userId), store.findUser(subject.userId)]);
      const details = { tokens_revoked: tokensRevoked, ...(person ? { email: person.email } : {}) };
      await audit.record(principal, { projectId: project.id, action: 'member.revoked', targetType: 'member', targetId: subjectId(subject), details });
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

  api.add(
    {
      route: 'DELETE /projects/:id/members/invitations/:email/',
      operationId: 'withdrawInvitation',
      summary: 'Withdraw an invitation',
      project: 'admin',
      responses: { 204: null },
      errors: [404],
    },
    async (ctx, { project, principal }) => {
      const email = String(ctx.params.email).toLowerCase();
      if (!(await store.deleteInvitation(project.id, email))) throw notFound('invitation not found');
      await audit.record(principal, { projectId: project.id, action: 'member.uninvited', targetType: 'member', targetId: `invitation:${email}`, details: { email } });
      ctx.status = 204;
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/members/me/',
      operationId: 'leaveProject',
      summary: 'Leave the project',
      description:
        "Anyone who holds a role of their own here may give it up, a viewer too; the `api` project tokens they made are revoked. A role held through a group of the sign-in stays until the group's grant or membership ends (409, naming the groups). The owner cannot leave (400): delete the project instead.",
      project: 'viewer',
      responses: { 204: null },
      errors: [404, 409],
    },
    async (ctx, { project, principal }) => {
      if (principal.token.kind !== 'personal') throw permissionDenied('only a person leaves a project: use a personal token or the console');
      if (project.ownerId === principal.userId) throw invalidArgument('the owner cannot leave the project; delete it instead');
      const subject = { kind: 'user', userId: principal.userId } as const;
      const ownGrant = (await store.grantsTo(principal.userId, [])).some((grant) => grant.projectId === project.id);
      if (!ownGrant) {
        const groups = (await store.grantsTo(principal.userId, principal.groups ?? [])).filter((grant) => grant.projectId === project.id && grant.subject.kind === 'group');
        if (groups.length > 0) {
          const names = groups.map((grant) => (grant.subject.kind === 'group' ? `"${grant.subject.group}"` : '')).join(', ');
          throw conflict(`you hold your role here through the group ${names} of your sign-in: ask an admin of the project to revoke the group's role, or the identity provider's administrator to take you out of the group`);
        }
        if (principal.isStaff) throw permissionDenied('staff may read, but not change, projects they do not own');
        throw notFound('you hold no role of your own in this project');
      }
      await store.revokeRole(project.id, subject);
      const tokensRevoked = await store.revokeTokensMadeBy(project.id, principal.userId);
      await audit.record(principal, { projectId: project.id, action: 'member.left', targetType: 'member', targetId: subjectId(subject), details: { tokens_revoked: tokensRevoked, email: await emailOf(principal) } });
      ctx.status = 204;
    },
  );

  mine.add(
    {
      route: 'GET /me/invitations/',
      operationId: 'listMyInvitations',
      summary: 'The invitations to your e-mail address',
      description: 'Open invitations to projects, oldest first; a project deleted since is left out.',
      responses: { 200: R.arrayOf(R.MyInvitation) },
    },
    async (ctx, { principal }) => {
      const email = await emailOf(principal);
      const invitations = await store.invitationsTo(email);
      const projects = await Promise.all(invitations.map((invitation) => projectOrNull(ctx, invitation.projectId)));
      ctx.body = invitations.flatMap((invitation, index) => {
        const invited = projects[index];
        return invited ? [{ project_id: invited.id, project_name: invited.name, role: invitation.role, invited_at: invitation.invitedAt.toISOString() }] : [];
      });
    },
  );

  mine.add(
    {
      route: 'POST /me/invitations/:pid/accept/',
      operationId: 'acceptInvitation',
      summary: 'Accept an invitation',
      description: 'The role becomes yours in the project at once, in place of any you held there of your own. An invitation answers one accept (404 after).',
      responses: { 200: R.ProjectMember },
      errors: [404],
    },
    async (ctx, { principal }) => {
      const projectId = pathId(ctx, 'pid', 'invitation');
      const email = await emailOf(principal);
      const project = await projectOrNull(ctx, projectId);
      const invitation = project && (await store.takeInvitation(projectId, email));
      if (!project || !invitation) throw notFound('invitation not found');
      const subject = { kind: 'user', userId: principal.userId } as const;
      const grantedAt = new Date();
      await store.grantRole({ projectId, subject, role: invitation.role, grantedAt, grantedBy: invitation.invitedBy });
      await audit.record(principal, { projectId, action: 'member.joined', targetType: 'member', targetId: subjectId(subject), details: { role: invitation.role, email } });
      ctx.body = { kind: 'user', user_id: principal.userId, email, role: invitation.role, granted_at: grantedAt.toISOString() };
    },
  );

  mine.add(
    {
      route: 'DELETE /me/invitations/:pid/',
      operationId: 'declineInvitation',
      summary: 'Decline an invitation',
      responses: { 204: null },
      errors: [404],
    },
    async (ctx, { principal }) => {
      const projectId = pathId(ctx, 'pid', 'invitation');
      if (!(await store.deleteInvitation(projectId, await emailOf(principal)))) throw notFound('invitation not found');
      ctx.status = 204;
    },
  );

  async function emailOf(principal: Principal): Promise<string> {
    const user = await store.findUser(principal.userId);
    if (!user) throw notFound('no such person');
    return user.email;
  }

  async function projectOrNull(ctx: Parameters<typeof rpc>[0], projectId: string): Promise<registry.Project | null> {
    return clients.registry.getProject({ projectId }, rpc(ctx)).then(
      ({ project }) => project ?? null,
      (error: unknown) => (isDomainError(error, 'NotFound') ? null : Promise.reject(error)),
    );
  }
}

function invitationJson(invitation: Invitation) {
  return { kind: 'invitation', email: invitation.email, role: invitation.role, granted_at: invitation.invitedAt.toISOString() };
}

function subjectId(subject: RoleGrant['subject']): string {
  return subject.kind === 'user' ? `user:${subject.userId}` : `group:${subject.group}`;
}
