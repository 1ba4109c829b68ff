import { invalidArgument, isDomainError } from '@ota/errors';
import type { registry } from '@ota/proto';
import type { Context } from 'koa';
import type { Principal } from '../auth/principal';
import { roleAllows, type Role } from '../auth/roles';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { auditJson, projectJson, userJson } from '../http/present';
import * as R from '../http/response-schemas';
import { AUDIT_LIMIT, auditQuery, cappedLimit, createProjectBody, listProjectsQuery, updateProjectBody, usersQuery } from '../http/schemas';
import { deleteProject } from '../use-cases/project-deletion';
import { callerOf, rpc, useCasePorts } from './context';

export function projectRoutes(table: OperationTable, deps: GatewayDeps): void {
  const ownProjects = table.section({ tag: 'Projects', access: 'personal' });
  const projects = table.section({ tag: 'Projects', access: 'developer' });
  const users = table.section({ tag: 'Users', access: 'staff' });
  const { clients, store, audit } = deps;

  /** The projects of other owners in which the person holds a role, each with the highest one; by name. */
  async function grantedProjects(ctx: Context, principal: Principal) {
    const roles = new Map<string, Role>();
    for (const grant of await store.grantsTo(principal.userId, principal.groups ?? [])) {
      const held = roles.get(grant.projectId);
      if (!held || roleAllows(grant.role, held)) roles.set(grant.projectId, grant.role);
    }
    const found = await Promise.all(
      [...roles.keys()].map((projectId) =>
        clients.registry.getProject({ projectId }, rpc(ctx)).then(
          ({ project }) => project,
          // A grant outlives nothing: a project deleted meanwhile is left out.
          (error: unknown) => (isDomainError(error, 'NotFound') ? undefined : Promise.reject(error)),
        ),
      ),
    );
    return found
      .filter((project): project is registry.Project => project !== undefined && project.ownerId !== principal.userId)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((project) => projectJson(project, roles.get(project.id)));
  }

  projects.add(
    {
      route: 'GET /projects/',
      operationId: 'listProjects',
      summary: 'List projects',
      description:
        "A personal token lists its user's projects; an `api` project token lists its own project. A staff token must name the owner with `email` or `owner_id`.",
      query: listProjectsQuery,
      responses: { 200: R.arrayOf(R.Project) },
    },
    async (ctx, { principal, query }) => {
      if (principal.token.kind === 'project') {
        const { project } = await clients.registry.getProject({ projectId: principal.token.projectId }, rpc(ctx));
        ctx.body = [projectJson(project!, principal.token.role ?? undefined)];
        return;
      }
      let ownerId = principal.userId;
      if (principal.isStaff) {
        if (!query.email && !query.owner_id) throw invalidArgument('staff must name the owner: pass email or owner_id');
        if (query.owner_id) ownerId = query.owner_id;
        else {
          const owner = await store.findUserByEmail(query.email!);
          if (!owner) {
            ctx.body = [];
            return;
          }
          ownerId = owner.id;
        }
      }
      const { projects } = await clients.registry.listProjects({ ownerId }, rpc(ctx));
      if (ownerId !== principal.userId) {
        // Staff reading another owner's projects: a viewer's read.
        ctx.body = projects.map((project) => projectJson(project, 'viewer'));
        return;
      }
      ctx.body = [...projects.map((project) => projectJson(project, 'admin')), ...(await grantedProjects(ctx, principal))];
    },
  );

  ownProjects.add(
    {
      route: 'POST /projects/',
      operationId: 'createProject',
      summary: 'Create a project',
      description: 'The new project has the default channel `stable`. Personal tokens only.',
      body: createProjectBody,
      responses: { 201: R.Project },
    },
    async (ctx, { principal, body }) => {
      const { project, defaultChannel } = await clients.registry.createProject({ ownerId: principal.userId, name: body.name }, rpc(ctx));
      await audit.record(principal, {
        projectId: project!.id,
        action: 'project.created',
        targetType: 'project',
        targetId: project!.id,
        details: { name: project!.name, slug: project!.slug, default_channel_id: defaultChannel!.id },
      });
      ctx.status = 201;
      ctx.body = projectJson(project!, 'admin');
    },
  );

  projects.add(
    { route: 'GET /projects/:id/', operationId: 'getProject', summary: 'Read a project', project: 'viewer', responses: { 200: R.Project } },
    async (ctx, { project, role }) => {
      ctx.body = projectJson(project, role);
    },
  );

  projects.add(
    {
      route: 'PATCH /projects/:id/',
      operationId: 'updateProject',
      summary: "Change a project's settings",
      description: '`require_esp_image`: uploads must be ESP-IDF application images (default false). Audited as `project.settings_changed`.',
      project: 'admin',
      body: updateProjectBody,
      responses: { 200: R.Project },
    },
    async (ctx, { project, principal, role, body }) => {
      const { project: updated } = await clients.registry.updateProjectSettings({ projectId: project.id, requireEspImage: body.require_esp_image }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'project.settings_changed', targetType: 'project', targetId: project.id, details: { ...body } });
      ctx.body = projectJson(updated!, role);
    },
  );

  ownProjects.add(
    {
      route: 'DELETE /projects/:id/',
      operationId: 'deleteProject',
      summary: 'Delete a project',
      description:
        'Personal tokens only. Refused with 409 while a deployment is active or paused. Deletes the channels, groups, devices and webhooks, and revokes the project and device tokens; artifacts are kept.',
      project: 'admin',
      responses: { 204: null },
      errors: [409],
    },
    async (ctx, { project }) => {
      await deleteProject(useCasePorts(deps), callerOf(ctx), project);
      ctx.status = 204;
    },
  );

  projects.add(
    {
      route: 'GET /projects/:id/audit/',
      operationId: 'listAuditEvents',
      summary: 'List audit events',
      description:
        'Newest first, in pages: `limit` events (default 100, at most 1000), and the next page with `before` set to the `id` of the last event of this one; `action` keeps one action or one resource\'s actions. Every customer mutation writes one, with the actor (and a user\'s e-mail) and the token prefix.',
      project: 'viewer',
      query: auditQuery,
      responses: { 200: R.arrayOf(R.AuditEvent) },
    },
    async (ctx, { project, query }) => {
      const { events } = await clients.telemetry.listAuditEvents(
        { projectId: project.id, limit: cappedLimit(query.limit, AUDIT_LIMIT.default, AUDIT_LIMIT.max), beforeId: query.before ?? '', action: query.action ?? '' },
        rpc(ctx),
      );
      // The people behind a page are few: one read each.
      const userIds = [...new Set(events.filter((event) => event.actorType === 'user').map((event) => event.actorId))];
      const emails = new Map(await Promise.all(userIds.map(async (id) => [id, (await store.findUser(id))?.email ?? null] as const)));
      ctx.body = events.map((event) => auditJson(event, event.actorType === 'user' ? (emails.get(event.actorId) ?? null) : null));
    },
  );

  users.add(
    {
      route: 'GET /users',
      operationId: 'findUsers',
      summary: 'Find a user by exact e-mail (staff)',
      description: 'Staff only; others get 403. Answers an array of zero or one user.',
      query: usersQuery,
      responses: { 200: R.arrayOf(R.User) },
    },
    async (ctx, { query }) => {
      const user = await store.findUserByEmail(query.email);
      ctx.body = user ? [userJson(user)] : [];
    },
  );
}
