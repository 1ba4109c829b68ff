import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

let f: ProjectFixture;
const path = (suffix = '') => `/api/v1/projects/${f.project.id}${suffix}`;
let artifactId: string;

beforeAll(async () => {
  f = await setupProject({ name: 'deployments' });
  artifactId = (await api('POST', path('/artifacts/'), { token: f.apiToken, body: uploadForm(MANIFEST, randomBinary(64)) })).body.id;
});

const create = (json: Record<string, unknown>) => api('POST', path('/deployments/'), { token: f.apiToken, json: { artifact_id: artifactId, ...json } });
const transition = (id: string, json: Record<string, unknown>) => api('POST', path(`/deployments/${id}/transition/`), { token: f.apiToken, json });

describe('creating deployments', () => {
  it('creates a draft with the defaults', async () => {
    const created = await create({ target_channel_ids: [f.defaultChannelId], notes: 'first' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      state: 'draft',
      artifact_id: artifactId,
      build_number: 1,
      rollout_percentage: 100,
      rollout_strategy: 'immediate',
      notes: 'first',
      failure_count: 0,
      started_at: null,
    });
    expect((await api('GET', path(`/deployments/${created.body.id}/`), { token: f.apiToken })).body).toEqual(created.body);
    expect((await api('GET', path('/deployments/'), { token: f.apiToken })).body[0].id).toBe(created.body.id);
  });

  it('refuses targets that are not the project’s, unknown artifacts, and bad fields', async () => {
    const other = await setupProject();
    expect((await create({ target_channel_ids: [other.defaultChannelId] })).status).toBe(400);
    expect((await create({ target_group_ids: ['00000000-0000-4000-8000-000000000000'] })).status).toBe(400);
    expect((await create({ artifact_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(400);
    expect((await create({ rollout_percentage: 101 })).status).toBe(422);
    expect((await create({ rollout_strategy: 'gradual' })).status).toBe(422);
    expect((await create({ targets: [] })).status).toBe(422);
  });
});

describe('transitions', () => {
  it('walk the state machine, and refuse what it does not allow with 400', async () => {
    const id = (await create({ target_channel_ids: [f.defaultChannelId], rollout_percentage: 10 })).body.id;
    expect((await transition(id, { action: 'pause' })).status).toBe(400);
    const started = await transition(id, { action: 'start' });
    expect(started.body).toMatchObject({ state: 'active', started_at: expect.any(String) });
    expect((await transition(id, { action: 'ramp' })).status).toBe(400);
    expect((await transition(id, { action: 'ramp', rollout_percentage: 50 })).body).toMatchObject({ state: 'active', rollout_percentage: 50 });
    expect((await transition(id, { action: 'pause' })).body.state).toBe('paused');
    expect((await transition(id, { action: 'ramp', rollout_percentage: 20 })).body).toMatchObject({ state: 'paused', rollout_percentage: 20 });
    expect((await transition(id, { action: 'resume' })).body.state).toBe('active');
    expect((await transition(id, { action: 'complete' })).body.state).toBe('completed');
    expect((await transition(id, { action: 'cancel' })).status).toBe(400);
    expect((await transition(id, { action: 'explode' })).status).toBe(422);
  });

  it('need confirm_all to start or resume a deployment without targets once the project has two devices', async () => {
    const g = await setupProject();
    const artifact = (await api('POST', `/api/v1/projects/${g.project.id}/artifacts/`, { token: g.apiToken, body: uploadForm(MANIFEST, randomBinary(8)) })).body.id;
    const draft = async () => (await api('POST', `/api/v1/projects/${g.project.id}/deployments/`, { token: g.apiToken, json: { artifact_id: artifact } })).body.id;
    const move = (id: string, json: Record<string, unknown>) => api('POST', `/api/v1/projects/${g.project.id}/deployments/${id}/transition/`, { token: g.apiToken, json });

    expect((await move(await draft(), { action: 'start' })).status).toBe(400);
    for (const deviceUuid of ['d1', 'd2']) await api('POST', `/api/v1/projects/${g.project.id}/devices/`, { token: g.apiToken, json: { device_id: deviceUuid } });
    const id = await draft();
    const refused = await move(id, { action: 'start' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain('confirm_all');
    expect((await move(id, { action: 'start', confirm_all: true })).body.state).toBe('active');
    await move(id, { action: 'pause' });
    expect((await move(id, { action: 'resume' })).status).toBe(400);
    expect((await move(id, { action: 'resume', confirm_all: true })).body.state).toBe('active');
  });

  it('let exactly one of two concurrent transitions from one state win', async () => {
    const id = (await create({ target_channel_ids: [f.defaultChannelId] })).body.id;
    await transition(id, { action: 'start' });
    // Two transitions of which either, once applied, refuses the other (both end the rollout): one
    // wins however the two interleave, so only two claims of the same version could let both through.
    // (A pause and a completion both pass when one ends before the other reads: a paused rollout
    // may be completed.)
    const [complete, cancel] = await Promise.all([transition(id, { action: 'complete' }), transition(id, { action: 'cancel' })]);
    const statuses = [complete.status, cancel.status].sort();
    expect(statuses).toEqual([200, 400]);
    const final = (await api('GET', path(`/deployments/${id}/`), { token: f.apiToken })).body.state;
    expect(final).toBe(complete.status === 200 ? 'completed' : 'cancelled');
  });
});

describe('rollout states and the audit trail', () => {
  it('lists per-device states by device UUID, and audits every transition', async () => {
    const g = await setupProject();
    const release = await api('POST', `/api/v1/projects/${g.project.id}/release/`, { token: g.user.token, body: uploadForm(MANIFEST, randomBinary(16)) });
    await api('POST', '/api/v1/ota/check/', { token: g.deviceScopeToken, json: checkBody('s-1') });
    await api('POST', '/api/v1/ota/status/', { token: g.deviceScopeToken, json: { device_id: 's-1', deployment_id: release.body.deployment_id, event: 'downloaded' } });
    const devices = await api('GET', `/api/v1/projects/${g.project.id}/devices/`, { token: g.user.token });
    const states = await api('GET', `/api/v1/projects/${g.project.id}/deployments/${release.body.deployment_id}/states/`, { token: g.user.token });
    expect(states.body).toEqual([{ device_id: devices.body[0].id, status: 'downloaded', reason: '', updated_at: expect.any(String) }]);

    const id = release.body.deployment_id;
    for (const json of [{ action: 'pause' }, { action: 'resume' }, { action: 'ramp', rollout_percentage: 30 }, { action: 'cancel' }]) {
      await api('POST', `/api/v1/projects/${g.project.id}/deployments/${id}/transition/`, { token: g.user.token, json });
    }
    const audit = await eventually(
      () => api('GET', `/api/v1/projects/${g.project.id}/audit/`, { token: g.user.token }),
      (response) => response.body.some((event: { action: string }) => event.action === 'deployment.cancelled'),
    );
    const actions = audit.body.map((event: { action: string }) => event.action);
    expect(actions).toEqual(
      expect.arrayContaining(['release.created', 'deployment.paused', 'deployment.resumed', 'deployment.ramped', 'deployment.cancelled']),
    );
  });
});
