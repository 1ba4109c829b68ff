import { randomUUID } from 'node:crypto';
import { MANIFEST, api, checkBody, createUser, grantRole, randomBinary, setupProject, uploadForm, type CreatedUser, type ProjectFixture } from '@ota/testkit';

// docs/api.md, "Roles": every operation the OpenAPI document places in a project, called by a
// person holding each role there, is refused (403 naming the role) exactly when the role is short
// of the one the document says the operation needs.

const ROLES = ['viewer', 'operator', 'approver', 'admin'] as const;
type Role = (typeof ROLES)[number];

interface DocumentedOperation {
  method: string;
  path: string;
  operationId: string;
  role: Role;
}

async function documentedOperations(): Promise<DocumentedOperation[]> {
  const document = await api<{ paths: Record<string, Record<string, { operationId: string; 'x-role'?: Role }>> }>('GET', '/api/v1/openapi.json');
  return Object.entries(document.body.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation['x-role'])
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, operationId: operation.operationId, role: operation['x-role']! })),
  );
}

/** The operation's path in the project, every other id one that names nothing. */
function pathIn(operation: DocumentedOperation, projectId: string): string {
  return operation.path.replace('{id}', projectId).replace(/\{group\}/g, 'nobody').replace(/\{[a-z_]+\}/g, () => randomUUID());
}

async function grant(owner: ProjectFixture, person: CreatedUser, role: Role): Promise<void> {
  await grantRole(owner, person, role);
}

let owner: ProjectFixture;
const members = {} as Record<Role, CreatedUser>;

beforeAll(async () => {
  owner = await setupProject({ name: 'roles matrix' });
  for (const role of ROLES) {
    members[role] = createUser();
    await grant(owner, members[role], role);
  }
});

it('answers each operation in a project to each role as the document says: 403 naming the role below it, never 403 from it up', async () => {
  const operations = await documentedOperations();
  expect(operations.length).toBeGreaterThan(40);
  // Deleting the project goes last but one (the admin's call deletes it), and leaving it last (every role may).
  const lastOf = (operation: DocumentedOperation) => ['deleteProject', 'leaveProject'].indexOf(operation.operationId);
  operations.sort((a, b) => lastOf(a) - lastOf(b));
  const wrong: string[] = [];
  for (const operation of operations) {
    for (const role of ROLES) {
      const answer = await api(operation.method, pathIn(operation, owner.project.id), { token: members[role].token, json: operation.method === 'GET' || operation.method === 'DELETE' ? undefined : {} });
      const allowed = ROLES.indexOf(role) >= ROLES.indexOf(operation.role);
      const refusedForRole = answer.status === 403 && typeof answer.body.detail === 'string' && answer.body.detail.includes(`needs the ${operation.role} role`);
      if (allowed ? answer.status === 403 : !refusedForRole) wrong.push(`${operation.operationId} as ${role}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  }
  expect(wrong).toEqual([]);
});

it('lists the projects a person holds a role in, with the role; a person with none gets 404, and a revoked role ends access at the next request', async () => {
  const project = await setupProject({ name: 'shared' });
  const person = createUser();
  expect((await api('GET', `/api/v1/projects/${project.project.id}/`, { token: person.token })).status).toBe(404);
  await grant(project, person, 'operator');
  const listed = await api('GET', '/api/v1/projects/', { token: person.token });
  expect(listed.body).toEqual([expect.objectContaining({ id: project.project.id, role: 'operator' })]);
  expect((await api('GET', `/api/v1/projects/${project.project.id}/`, { token: person.token })).body.role).toBe('operator');

  const members = await api('GET', `/api/v1/projects/${project.project.id}/members/`, { token: person.token });
  expect(members.body).toEqual([
    expect.objectContaining({ kind: 'owner', email: project.user.email, role: 'admin', granted_at: null }),
    expect.objectContaining({ kind: 'user', user_id: person.user_id, email: person.email, role: 'operator' }),
  ]);
  // Granting again replaces the role.
  await grant(project, person, 'viewer');
  expect((await api('GET', `/api/v1/projects/${project.project.id}/`, { token: person.token })).body.role).toBe('viewer');

  const revoked = await api('DELETE', `/api/v1/projects/${project.project.id}/members/users/${person.user_id}/`, { token: project.user.token });
  expect(revoked.status).toBe(204);
  expect((await api('GET', `/api/v1/projects/${project.project.id}/`, { token: person.token })).status).toBe(404);
  expect((await api('GET', '/api/v1/projects/', { token: person.token })).body).toEqual([]);
  expect((await api('DELETE', `/api/v1/projects/${project.project.id}/members/users/${person.user_id}/`, { token: project.user.token })).status).toBe(404);
});

it('refuses a grant that names no one, the owner, both a person and a group, or a group never seen unconfirmed, with a detail', async () => {
  const project = await setupProject({ name: 'grants' });
  const grantBody = async (json: object) => api('POST', `/api/v1/projects/${project.project.id}/members/`, { token: project.user.token, json });
  const toOwner = await grantBody({ email: project.user.email, role: 'viewer' });
  expect([toOwner.status, toOwner.body.detail]).toEqual([400, 'the owner is an admin of the project, always']);
  expect((await grantBody({ email: project.user.email, group: 'ops', role: 'viewer' })).status).toBe(400);
  expect((await grantBody({ role: 'viewer' })).status).toBe(400);
  expect((await grantBody({ group: 'ops', role: 'owner' })).status).toBe(422);
  const unseen = await grantBody({ group: 'platform ops', role: 'approver' });
  expect([unseen.status, unseen.body.detail]).toEqual([409, expect.stringContaining('no one has signed in with the group "platform ops" yet')]);
  const group = await grantBody({ group: 'platform ops', role: 'approver', confirm_unseen_group: true });
  expect([group.status, group.body]).toEqual([200, expect.objectContaining({ kind: 'group', group: 'platform ops', role: 'approver' })]);
  expect((await api('DELETE', `/api/v1/projects/${project.project.id}/members/groups/${encodeURIComponent('platform ops')}/`, { token: project.user.token })).status).toBe(204);
});

it('gives an api token the role it was made with; a device token takes none', async () => {
  const project = await setupProject({ name: 'token roles' });
  const make = (json: object) => api('POST', `/api/v1/projects/${project.project.id}/tokens/`, { token: project.user.token, json });
  const viewer = await make({ name: 'dashboards', scope: 'api', role: 'viewer' });
  expect([viewer.status, viewer.body.role]).toEqual([201, 'viewer']);
  const refused = await api('POST', `/api/v1/projects/${project.project.id}/groups/`, { token: viewer.body.token, json: { name: 'canary' } });
  expect([refused.status, refused.body.detail]).toEqual([403, "Create a group needs the operator role in this project; the caller's role is viewer"]);
  expect((await api('GET', `/api/v1/projects/${project.project.id}/groups/`, { token: viewer.body.token })).status).toBe(200);
  expect((await make({ name: 'fleet', scope: 'device', role: 'viewer' })).status).toBe(400);
  expect((await make({ name: 'fleet', scope: 'device' })).body.role).toBeNull();
});

it('records the role each actor acted with, and how it signed in', async () => {
  const project = await setupProject({ name: 'audited roles' });
  const person = createUser();
  await grant(project, person, 'operator');
  expect((await api('POST', `/api/v1/projects/${project.project.id}/groups/`, { token: person.token, json: { name: 'canary' } })).status).toBe(201);
  let events: Array<{ action: string; actor_role: string | null; actor_via: string | null; actor_email: string | null }> = [];
  for (let attempt = 0; attempt < 50 && !events.some((event) => event.action === 'group.created'); attempt++) {
    events = (await api('GET', `/api/v1/projects/${project.project.id}/audit/`, { token: project.user.token })).body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(events.find((event) => event.action === 'group.created')).toMatchObject({ actor_role: 'operator', actor_via: 'personal_token', actor_email: person.email });
  expect(events.find((event) => event.action === 'member.invited')).toMatchObject({ actor_role: 'admin', actor_via: 'personal_token' });
  // The person's own accept is theirs: no role yet, a personal token.
  expect(events.find((event) => event.action === 'member.joined')).toMatchObject({ actor_email: person.email, actor_via: 'personal_token' });
});

it('keeps an approval gate for approvers: an operator may pause, resume and ramp, but not upwards past a stage that needs approval', async () => {
  const project = await setupProject({ name: 'gated' });
  const [operator, approver] = [createUser(), createUser()];
  await grant(project, operator, 'operator');
  await grant(project, approver, 'approver');
  expect((await api('POST', '/api/v1/ota/check/', { token: project.deviceScopeToken, json: checkBody('unit-1') })).status).toBe(200);
  const artifact = await api('POST', `/api/v1/projects/${project.project.id}/artifacts/`, { token: operator.token, body: uploadForm(MANIFEST, randomBinary(64)) });
  const created = await api('POST', `/api/v1/projects/${project.project.id}/deployments/`, {
    token: operator.token,
    json: { artifact_id: artifact.body.id, stages: [{ percentage: 10, min_wait_seconds: 3600 }, { percentage: 50, approval_required: true }] },
  });
  expect(created.status).toBe(201);
  const transition = (person: CreatedUser, json: object) => api('POST', `/api/v1/projects/${project.project.id}/deployments/${created.body.id}/transition/`, { token: person.token, json });
  expect((await transition(operator, { action: 'start' })).status).toBe(200);

  const upwards = await transition(operator, { action: 'ramp', rollout_percentage: 50 });
  expect([upwards.status, upwards.body.detail]).toEqual([403, "Ramping past a stage that needs approval needs the approver role in this project; the caller's role is operator"]);
  expect((await transition(operator, { action: 'ramp', rollout_percentage: 5 })).status).toBe(200);
  expect((await transition(operator, { action: 'pause' })).body.state).toBe('paused');
  expect((await transition(operator, { action: 'resume' })).body.state).toBe('active');
  expect((await transition(approver, { action: 'ramp', rollout_percentage: 50 })).body.rollout_percentage).toBe(50);
  expect((await transition(approver, { action: 'pause' })).body.state).toBe('paused');
  expect((await transition(operator, { action: 'complete' })).body.state).toBe('completed');
});

it('answers a grant by e-mail the same for a registered and an unknown address, with no user id, and lists no project before its person accepts', async () => {
  const project = await setupProject({ name: 'invitations' });
  const person = createUser();
  const invite = (email: string) => api('POST', `/api/v1/projects/${project.project.id}/members/`, { token: project.user.token, json: { email, role: 'operator' } });
  const known = await invite(person.email);
  const unknownEmail = `nobody-${randomUUID()}@example.com`;
  const unknown = await invite(unknownEmail);
  expect([known.status, Object.keys(known.body).sort()]).toEqual([unknown.status, Object.keys(unknown.body).sort()]);
  expect([known.status, known.body]).toEqual([202, { kind: 'invitation', email: person.email, role: 'operator', granted_at: expect.any(String) }]);
  expect(JSON.stringify(known.body)).not.toContain(person.user_id);

  // Nothing changes for the person until they accept.
  expect((await api('GET', '/api/v1/projects/', { token: person.token })).body).toEqual([]);
  expect((await api('GET', `/api/v1/projects/${project.project.id}/`, { token: person.token })).status).toBe(404);
  const mine = await api('GET', '/api/v1/me/invitations/', { token: person.token });
  expect(mine.body).toEqual([{ project_id: project.project.id, project_name: 'invitations', role: 'operator', invited_at: expect.any(String) }]);
  const members = (await api('GET', `/api/v1/projects/${project.project.id}/members/`, { token: project.user.token })).body as Array<{ kind: string; email?: string }>;
  expect(members.filter((member) => member.kind === 'invitation').map((member) => member.email).sort()).toEqual([person.email, unknownEmail].sort());

  // Two accepts at once make one grant; the invitation is gone after.
  const accepts = await Promise.all([0, 1].map(() => api('POST', `/api/v1/me/invitations/${project.project.id}/accept/`, { token: person.token })));
  expect(accepts.map((answer) => answer.status).sort()).toEqual([200, 404]);
  expect((await api('GET', '/api/v1/projects/', { token: person.token })).body).toEqual([expect.objectContaining({ id: project.project.id, role: 'operator' })]);
  // A member's role is changed at once.
  const changed = await invite(person.email);
  expect([changed.status, changed.body.role]).toEqual([200, 'operator']);

  // An invitation may be declined, or withdrawn.
  const other = await setupProject({ name: 'declined' });
  await api('POST', `/api/v1/projects/${other.project.id}/members/`, { token: other.user.token, json: { email: person.email, role: 'viewer' } });
  expect((await api('DELETE', `/api/v1/me/invitations/${other.project.id}/`, { token: person.token })).status).toBe(204);
  expect((await api('GET', '/api/v1/me/invitations/', { token: person.token })).body).toEqual([]);
  expect((await api('DELETE', `/api/v1/projects/${project.project.id}/members/invitations/${encodeURIComponent(unknownEmail)}/`, { token: project.user.token })).status).toBe(204);
});

it('lets anyone leave a project, a viewer too; the owner cannot, and a role held through a group says whom to ask', async () => {
  const project = await setupProject({ name: 'leaving' });
  const viewer = createUser();
  await grant(project, viewer, 'viewer');
  const leave = (token: string) => api('DELETE', `/api/v1/projects/${project.project.id}/members/me/`, { token });
  expect((await leave(viewer.token)).status).toBe(204);
  expect((await api('GET', '/api/v1/projects/', { token: viewer.token })).body).toEqual([]);
  expect((await leave(viewer.token)).status).toBe(404);
  const owner = await leave(project.user.token);
  expect([owner.status, owner.body.detail]).toEqual([400, 'the owner cannot leave the project; delete it instead']);
  expect((await leave(project.apiToken)).status).toBe(403);
});
