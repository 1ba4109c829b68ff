import { MANIFEST, api, checkBody, createUser, eventually, grantRole, randomBinary, setupProject, uploadForm, type CreatedUser } from '@ota/testkit';

// docs/api.md, "Holds on a build": an approval gate or a guardrail pause holds its build whatever
// the path; only an approver goes around one, saying so, and the answer and the audit name it.

/** A project of `size` checked-in devices, an operator, an approver, and one build. */
async function projectWithBuild(size: number) {
  const project = await setupProject({ name: 'holds' });
  const [operator, approver] = [createUser(), createUser()];
  await grantRole(project, operator, 'operator');
  await grantRole(project, approver, 'approver');
  const devices = Array.from({ length: size }, (_, i) => `held-${i + 1}`);
  for (const deviceId of devices) expect((await api('POST', '/api/v1/ota/check/', { token: project.deviceScopeToken, json: checkBody(deviceId) })).status).toBe(200);
  const binary = randomBinary(64);
  const artifact = await api('POST', `/api/v1/projects/${project.project.id}/artifacts/`, { token: operator.token, body: uploadForm(MANIFEST, binary) });
  expect(artifact.status).toBe(201);
  const deployments = `/api/v1/projects/${project.project.id}/deployments/`;
  const create = async (person: CreatedUser, json: object) => {
    const created = await api('POST', deployments, { token: person.token, json: { artifact_id: artifact.body.id, ...json } });
    expect(created.status).toBe(201);
    return created.body as { id: string; build_number: number };
  };
  const transition = (person: CreatedUser, id: string, json: object) => api('POST', `${deployments}${id}/transition/`, { token: person.token, json });
  const offered = async () => {
    let count = 0;
    for (const deviceId of devices) if ((await api('POST', '/api/v1/ota/check/', { token: project.deviceScopeToken, json: checkBody(deviceId) })).body.update_available) count++;
    return count;
  };
  const audit = async (action: string, id: string) =>
    ((await api('GET', `/api/v1/projects/${project.project.id}/audit/?limit=1000`, { token: project.user.token })).body as Array<{ action: string; target_id: string; details: Record<string, unknown> }>).filter(
      (event) => event.action === action && event.target_id === id,
    );
  const holds = async () => (await api('GET', `/api/v1/projects/${project.project.id}/artifacts/${artifact.body.id}/holds/`, { token: operator.token })).body;
  return { project, operator, approver, devices, binary, create, transition, offered, audit, holds };
}

it('holds a build at its approval gate: a second deployment of it cannot be started or ramped by an operator, and an approver goes around it only saying so', async () => {
  const { operator, approver, create, transition, offered, audit, holds } = await projectWithBuild(20);
  // A small deployment of the build, started before the gate was: it cannot be ramped past the gate now.
  const small = await create(operator, { rollout_percentage: 5 });
  expect((await transition(operator, small.id, { action: 'start', confirm_all: true })).status).toBe(200);
  const staged = await create(operator, { stages: [{ percentage: 10 }, { percentage: 100, approval_required: true }] });
  expect((await transition(operator, staged.id, { action: 'start', confirm_all: true })).status).toBe(200);

  expect(await holds()).toEqual([{ deployment_id: staged.id, kind: 'approval_gate', detail: `deployment ${staged.id} waits for approval before 100% (it is at 10%)` }]);
  const around = await create(operator, {});
  const refused = await transition(operator, around.id, { action: 'start', confirm_all: true });
  expect(refused.status).toBe(403);
  expect(refused.body.detail).toContain(`deployment ${staged.id} waits for approval before 100%`);
  expect(refused.body.detail).toContain('needs the approver role');
  expect(await offered()).toBeLessThan(20);

  expect((await transition(operator, small.id, { action: 'ramp', rollout_percentage: 100 })).status).toBe(403);
  expect((await transition(operator, small.id, { action: 'ramp', rollout_percentage: 1 })).status).toBe(200);
  const asked = await transition(approver, around.id, { action: 'start', confirm_all: true });
  expect([asked.status, asked.body.detail]).toEqual([400, expect.stringContaining('send override_holds: true')]);

  const overridden = await transition(approver, around.id, { action: 'start', confirm_all: true, override_holds: true });
  expect(overridden.status).toBe(200);
  expect(overridden.body.overridden_holds).toEqual([{ deployment_id: staged.id, kind: 'approval_gate', detail: expect.stringContaining('waits for approval before 100%') }]);
  const started = await eventually(() => audit('deployment.started', around.id), (events) => events.length === 1);
  expect(started[0]!.details.overridden_holds).toEqual(overridden.body.overridden_holds);
});

it('holds a build a guardrail paused: an operator can neither start nor resume another deployment of it', async () => {
  const { project, operator, approver, devices, binary, create, transition, offered } = await projectWithBuild(4);
  const guarded = await create(operator, { guardrails: { failure_threshold: { percent: 50, min_finished: 1 } } });
  expect((await transition(operator, guarded.id, { action: 'start', confirm_all: true })).status).toBe(200);
  const failed = await api('POST', '/api/v1/ota/status/', { token: project.deviceScopeToken, json: { device_id: devices[0], deployment_id: guarded.id, event: 'failed', reason: 'flash_write_error' } });
  expect(failed.status).toBe(200);
  const read = async (id: string) => (await api('GET', `/api/v1/projects/${project.project.id}/deployments/${id}/`, { token: operator.token })).body;
  expect((await eventually(() => read(guarded.id), (deployment) => deployment.state === 'paused')).guardrail_pause).toMatchObject({ guardrail: 'failure_threshold' });

  const again = await create(operator, { rollout_percentage: 100 });
  const refused = await transition(operator, again.id, { action: 'start', confirm_all: true });
  expect(refused.status).toBe(403);
  expect(refused.body.detail).toContain(`deployment ${guarded.id} was paused by its failure_threshold guardrail`);
  expect(await offered()).toBe(0);

  // The same bytes released again are the same build: held, and nothing is stored.
  const builds = async () => ((await api('GET', `/api/v1/projects/${project.project.id}/artifacts/`, { token: operator.token })).body as unknown[]).length;
  const release = (token: string, fields: Record<string, string> = {}) =>
    api('POST', `/api/v1/projects/${project.project.id}/release/`, { token, body: uploadForm(MANIFEST, binary, { channel_name: 'stable', ...fields }) });
  const released = await release(operator.token);
  expect([released.status, released.body.detail]).toEqual([403, expect.stringContaining(`deployment ${guarded.id} was paused by its failure_threshold guardrail`)]);
  expect((await release(approver.token)).status).toBe(400);
  expect(await builds()).toBe(1);
  expect((await release(approver.token, { override_holds: 'true' })).status).toBe(201);
  expect(await builds()).toBe(2);

  expect((await transition(approver, again.id, { action: 'start', confirm_all: true, override_holds: true })).status).toBe(200);
});

it('lets an operator pause; a guardrail pause is resumed only by an approver who confirms the percentage it resumes at', async () => {
  const { project, operator, approver, devices, create, transition } = await projectWithBuild(4);
  const manual = await create(operator, { rollout_percentage: 50 });
  expect((await transition(operator, manual.id, { action: 'start', confirm_all: true })).status).toBe(200);
  expect((await transition(operator, manual.id, { action: 'pause' })).body.state).toBe('paused');
  expect((await transition(operator, manual.id, { action: 'resume', confirm_all: true })).body.state).toBe('active');
  expect((await transition(operator, manual.id, { action: 'cancel' })).body.state).toBe('cancelled');

  const guarded = await create(operator, { rollout_percentage: 25, guardrails: { failure_threshold: { percent: 50, min_finished: 1 } } });
  expect((await transition(operator, guarded.id, { action: 'start', confirm_all: true })).status).toBe(200);
  await api('POST', '/api/v1/ota/status/', { token: project.deviceScopeToken, json: { device_id: devices[0], deployment_id: guarded.id, event: 'failed', reason: 'flash_write_error' } });
  await eventually(async () => (await api('GET', `/api/v1/projects/${project.project.id}/deployments/${guarded.id}/`, { token: operator.token })).body.state, (state) => state === 'paused');
  // A ramp while paused moves nothing now, but is what a resume would resume to.
  expect((await transition(operator, guarded.id, { action: 'ramp', rollout_percentage: 100 })).status).toBe(200);

  const byOperator = await transition(operator, guarded.id, { action: 'resume', confirm_all: true, rollout_percentage: 100 });
  expect([byOperator.status, byOperator.body.detail]).toEqual([403, expect.stringContaining('needs the approver role')]);
  const unconfirmed = await transition(approver, guarded.id, { action: 'resume', confirm_all: true });
  expect([unconfirmed.status, unconfirmed.body.detail]).toEqual([400, expect.stringContaining('resumes at 100%')]);
  const stale = await transition(approver, guarded.id, { action: 'resume', confirm_all: true, rollout_percentage: 25 });
  expect([stale.status, stale.body.detail]).toEqual([409, expect.stringContaining('it would resume at 100%, not 25%')]);
  const resumed = await transition(approver, guarded.id, { action: 'resume', confirm_all: true, rollout_percentage: 100 });
  expect([resumed.status, resumed.body.state, resumed.body.rollout_percentage]).toEqual([200, 'active', 100]);
});
