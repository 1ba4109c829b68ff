import { api, eventually, randomBinary, setupProject, uploadForm } from '@ota/testkit';

// Audit events travel over NATS JetStream to telemetry, so the test waits for them to arrive rather
// than expect them at once.

let userToken: string;
let projectId: string;
let deviceToken: string;

beforeAll(async () => {
  const fixture = await setupProject({ name: 'telemetry' });
  [userToken, projectId, deviceToken] = [fixture.user.token, fixture.project.id, fixture.deviceScopeToken];
  const release = await api('POST', `/api/v1/projects/${projectId}/release/`, {
    token: userToken,
    body: uploadForm({ version_label: '2.0.0', framework: 'arduino', chip_family: 'esp32' }, randomBinary(64)),
  });
  expect(release.status).toBe(201);
});

describe('audit events', () => {
  it('record customer mutations with the actor and only the token prefix', async () => {
    const response = await eventually(
      () => api('GET', `/api/v1/projects/${projectId}/audit/`, { token: userToken }),
      (result) => result.body.some((event: { action: string }) => event.action === 'release.created'),
    );
    const actions = response.body.map((event: { action: string }) => event.action);
    expect(actions).toEqual(expect.arrayContaining(['project.created', 'token.created', 'release.created']));
    const created = response.body.find((event: { action: string }) => event.action === 'project.created');
    expect(created).toMatchObject({ actor_type: 'user', token_prefix: userToken.slice(0, 12), target_type: 'project', target_id: projectId });
    expect(JSON.stringify(response.body)).not.toContain(userToken);
    expect(JSON.stringify(response.body)).not.toContain(deviceToken);
  });
});
