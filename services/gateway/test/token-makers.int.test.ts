import { api, checkBody, createUser, grantRole as grant, setupProject } from '@ota/testkit';

// docs/security.md, "Tokens outlive no one": a project token records who made it, holds at most
// its maker's role, and is disarmed when its maker leaves the project.

it("disarms a removed admin's tokens: they cannot read the project or grant themselves back, and the list shows who made them", async () => {
  const project = await setupProject({ name: 'made by' });
  const admin = createUser();
  await grant(project, admin, 'admin');
  const made = await api('POST', `/api/v1/projects/${project.project.id}/tokens/`, { token: admin.token, json: { name: 'side door', scope: 'api', role: 'admin' } });
  expect(made.status).toBe(201);
  // The fleet's token they made stays: devices must not stop checking because a person left.
  const fleet = await api('POST', `/api/v1/projects/${project.project.id}/tokens/`, { token: admin.token, json: { name: 'fleet', scope: 'device' } });
  expect(made.body.created_by).toEqual({ user_id: admin.user_id, email: admin.email });
  expect((await api('GET', `/api/v1/projects/${project.project.id}/`, { token: made.body.token })).status).toBe(200);

  expect((await api('DELETE', `/api/v1/projects/${project.project.id}/members/users/${admin.user_id}/`, { token: project.user.token })).status).toBe(204);
  const read = await api('GET', `/api/v1/projects/${project.project.id}/`, { token: made.body.token });
  expect(read.status).toBe(401);
  const regrant = await api('POST', `/api/v1/projects/${project.project.id}/members/`, { token: made.body.token, json: { email: admin.email, role: 'admin' } });
  expect(regrant.status).toBe(401);
  expect((await api('GET', `/api/v1/projects/${project.project.id}/`, { token: admin.token })).status).toBe(404);
  expect((await api('POST', '/api/v1/ota/check/', { token: fleet.body.token, json: checkBody('still-checking') })).status).toBe(200);

  const listed = (await api('GET', `/api/v1/projects/${project.project.id}/tokens/`, { token: project.user.token })).body as Array<{ id: string; created_by: unknown; revoked_at: string | null }>;
  expect(listed.find((token) => token.id === made.body.id)).toMatchObject({ created_by: { user_id: admin.user_id, email: admin.email }, revoked_at: expect.any(String) });
  const audit = await api('GET', `/api/v1/projects/${project.project.id}/audit/?action=member.revoked`, { token: project.user.token });
  expect(audit.body[0]?.details).toMatchObject({ tokens_revoked: 1 });
});

it("acts with the lower of its role and its maker's now: a maker made viewer takes their admin token down with them", async () => {
  const project = await setupProject({ name: 'capped' });
  const admin = createUser();
  await grant(project, admin, 'admin');
  const made = await api('POST', `/api/v1/projects/${project.project.id}/tokens/`, { token: admin.token, json: { name: 'ci', scope: 'api', role: 'admin' } });
  expect((await api('POST', `/api/v1/projects/${project.project.id}/groups/`, { token: made.body.token, json: { name: 'before' } })).status).toBe(201);
  await grant(project, admin, 'viewer');
  const refused = await api('POST', `/api/v1/projects/${project.project.id}/groups/`, { token: made.body.token, json: { name: 'after' } });
  expect([refused.status, refused.body.detail]).toEqual([403, "Create a group needs the operator role in this project; the caller's role is viewer"]);
});

it('gives an api token the role it is made with, never admin by default, and never above its maker', async () => {
  const project = await setupProject({ name: 'chosen roles' });
  const make = (token: string, json: object) => api('POST', `/api/v1/projects/${project.project.id}/tokens/`, { token, json });
  const unnamed = await make(project.user.token, { name: 'ci', scope: 'api' });
  expect([unnamed.status, unnamed.body.detail]).toEqual([400, 'an api token needs a role: viewer, operator, approver or admin']);
  // A token made by a token is its maker's person's: an operator token cannot make tokens at all, an admin token makes them for its maker.
  const admin = await make(project.user.token, { name: 'admin ci', scope: 'api', role: 'admin' });
  const child = await make(admin.body.token, { name: 'child', scope: 'api', role: 'operator' });
  expect([child.status, child.body.created_by]).toEqual([201, { user_id: project.user.user_id, email: project.user.email }]);
});
