import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, WebhookReceiver, type ProjectFixture } from '@ota/testkit';

// Deployments that protect the fleet by themselves (docs/api.md, "Guardrails and staged plans"),
// driven through the public API against the real services. The stack supervises every 500 ms
// (SUPERVISE_INTERVAL_MS in the test stack), so what happens on the timer shows within seconds.
// Each project has a webhook whose receiver fails the first two attempts of every delivery: what
// the deployment did must reach it, signed, once in effect.

const receivers: WebhookReceiver[] = [];
const DEPLOYMENT_EVENTS = ['created', 'started', 'paused', 'resumed', 'ramped', 'completed', 'cancelled', 'guardrail_tripped', 'stage_advanced'].map((kind) => `deployment.${kind}`);
afterAll(() => Promise.all(receivers.map((receiver) => receiver.close())));

const check = (f: ProjectFixture, deviceId: string) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });
const report = (f: ProjectFixture, deployment: { id: string; build_number: number }, deviceId: string, event: string, reason?: string) =>
  api('POST', '/api/v1/ota/status/', {
    token: f.deviceScopeToken,
    // A confirmation names the build the device booted.
    json: { device_id: deviceId, deployment_id: deployment.id, event, ...(reason ? { reason } : {}), ...(event === 'confirmed' ? { build_number: deployment.build_number } : {}) },
  });
const fleetOf = (prefix: string, size: number) => Array.from({ length: size }, (_, i) => `${prefix}-${i + 1}`);

/** A project with `fleet` checked in, a webhook, and a started deployment over all of it with `options`. */
async function startedDeployment(fleet: string[], options: Record<string, unknown>) {
  const f = await setupProject();
  const receiver = await WebhookReceiver.start((_, attempt) => (attempt <= 2 ? 503 : 204));
  receivers.push(receiver);
  const webhook = await api('POST', `/api/v1/projects/${f.project.id}/webhooks/`, { token: f.user.token, json: { url: receiver.url, events: ['artifact.uploaded', ...DEPLOYMENT_EVENTS] } });
  expect(webhook.status).toBe(201);
  /** The events the receiver accepted, once each, after checking every attempt's signature. */
  const delivered = async (events: string[]) => {
    const accepted = await eventually(
      async () => receiver.accepted().map((delivery) => delivery.event).sort(),
      (kinds) => JSON.stringify(kinds) === JSON.stringify([...events].sort()),
      30_000,
    );
    expect(accepted).toEqual([...events].sort());
    for (const attempt of receiver.attempts) expect(WebhookReceiver.signatureIsValid(webhook.body.secret, attempt)).toBe(true);
    // Two refused attempts, then the one accepted; each attempt of a delivery sent the same body.
    for (const delivery of receiver.accepted()) {
      const attempts = receiver.attempts.filter((attempt) => attempt.id === delivery.id);
      expect(attempts.map((attempt) => attempt.answered).slice(0, 3)).toEqual([503, 503, 204]);
      expect(new Set(attempts.map((attempt) => attempt.body)).size).toBe(1);
    }
    return receiver.accepted().map((delivery) => JSON.parse(delivery.body) as { event: string; kinds: string[]; audit_event: Record<string, unknown> });
  };
  for (const deviceId of fleet) expect((await check(f, deviceId)).status).toBe(200);
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, ...options } });
  expect(created.status).toBe(201);
  const path = `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/`;
  const started = await api('POST', `${path}transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect(started.status).toBe(200);
  const read = async () => (await api('GET', path, { token: f.user.token })).body;
  const audit = async (action: string) =>
    ((await api('GET', `/api/v1/projects/${f.project.id}/audit/?limit=1000`, { token: f.user.token })).body as Array<Record<string, unknown>>).filter(
      (event) => event.action === action && event.target_id === created.body.id,
    );
  return { f, deployment: started.body, path, read, audit, delivered };
}

test('a staged rollout ramps itself stage by stage, and waits for a person where a stage needs approval', async () => {
  const fleet = fleetOf('staged', 20);
  const stages = [
    { percentage: 10, min_wait_seconds: 1 },
    { percentage: 50, min_wait_seconds: 1 },
    { percentage: 80, min_wait_seconds: 0, approval_required: true },
    { percentage: 100, min_wait_seconds: 1 },
  ];
  const { f, deployment, path, read, audit, delivered } = await startedDeployment(fleet, { stages });
  // The start begins at the first stage, with its wait running.
  expect(deployment).toMatchObject({ state: 'active', rollout_percentage: 10, stages: stages.map((stage) => ({ min_wait_seconds: 0, approval_required: false, ...stage })) });
  expect(deployment.stage).toMatchObject({ index: 0, next_stage_needs_approval: false });
  expect(Date.parse(deployment.stage.next_stage_at) - Date.parse(deployment.stage.entered_at)).toBe(1000);

  // It ramps itself to 50%, then stops before the stage that needs approval.
  const waiting = await eventually(read, (d) => d.stage.index === 1, 20_000);
  expect(waiting).toMatchObject({ state: 'active', rollout_percentage: 50, stage: { index: 1, next_stage_needs_approval: true } });
  const ramps = await eventually(() => audit('deployment.ramped'), (events) => events.length === 1);
  expect(ramps[0]).toMatchObject({ actor_type: 'system', actor_id: 'rollout', details: { automatic: true, stage: 1, rollout_percentage: 50 } });

  // A person's ramp to 80% approves stage 2; the plan then goes on to 100% by itself.
  const approved = await api('POST', `${path}transition/`, { token: f.user.token, json: { action: 'ramp', rollout_percentage: 80 } });
  expect(approved.body).toMatchObject({ rollout_percentage: 80, stage: { index: 2 } });
  const done = await eventually(read, (d) => d.stage.index === 3, 20_000);
  expect(done).toMatchObject({ state: 'active', rollout_percentage: 100, stage: { index: 3, next_stage_at: null } });
  // At 100% every device of the fleet is offered the build.
  for (const deviceId of fleet) expect((await check(f, deviceId)).body.update_available).toBe(true);
  const events = await delivered(['artifact.uploaded', 'deployment.created', 'deployment.started', 'deployment.stage_advanced', 'deployment.ramped', 'deployment.stage_advanced']);
  const advances = events.filter((event) => event.event === 'deployment.stage_advanced');
  expect(advances.map((event) => event.kinds)).toEqual([
    ['deployment.ramped', 'deployment.stage_advanced'],
    ['deployment.ramped', 'deployment.stage_advanced'],
  ]);
  expect(advances.map((event) => event.audit_event.details).sort((a, b) => Number((a as { stage: number }).stage) - Number((b as { stage: number }).stage))).toMatchObject([
    { stage: 1, rollout_percentage: 50 },
    { stage: 3, rollout_percentage: 100 },
  ]);
}, 120_000);

test('a deployment pauses itself once, at the report that takes its failed share to the threshold, and a person resumes it', async () => {
  const fleet = fleetOf('threshold', 12);
  const { f, deployment, path, read, audit, delivered } = await startedDeployment(fleet, { guardrails: { failure_threshold: { percent: 40, min_finished: 5 } } });
  for (const deviceId of fleet) expect((await check(f, deviceId)).body.update_available).toBe(true);
  // 3 confirmed and 1 failed: 4 finished is below min_finished, and 25% below the threshold.
  for (const deviceId of fleet.slice(0, 3)) expect((await report(f, deployment, deviceId, 'confirmed')).status).toBe(200);
  await report(f, deployment, fleet[3]!, 'failed', 'flash_write_error');
  expect((await read()).state).toBe('active');

  // Five devices fail at once: the report that makes 2 of 5 (40%) pauses it, and the reports
  // racing it make no second pause.
  const burst = await Promise.all(fleet.slice(4, 9).map((deviceId) => report(f, deployment, deviceId, 'failed', 'flash_write_error')));
  expect(burst.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
  const paused = await read();
  expect(paused.state).toBe('paused');
  expect(paused.guardrail_pause).toMatchObject({ guardrail: 'failure_threshold', figures: { confirmed: 3 } });
  expect(paused.guardrail_pause.figures.failed * 100).toBeGreaterThanOrEqual(40 * paused.guardrail_pause.figures.finished);
  expect(paused.guardrail_pause.detail).toMatch(/finished devices failed/);
  // Paused means paused: the rest of the fleet is offered nothing.
  expect((await check(f, fleet[11]!)).body.update_available).toBe(false);
  const pauses = await eventually(() => audit('deployment.paused'), (events) => events.length >= 1);
  expect(pauses).toHaveLength(1);
  expect(pauses[0]).toMatchObject({ actor_type: 'system', actor_id: 'rollout', details: { automatic: true, guardrail: 'failure_threshold' } });

  // Only a person lifts it, confirming the percentage it resumes at; the resume clears why it paused.
  const resumed = await api('POST', `${path}transition/`, { token: f.user.token, json: { action: 'resume', confirm_all: true, rollout_percentage: paused.rollout_percentage } });
  expect(resumed.body).toMatchObject({ state: 'active', guardrail_pause: null });
  // The figures the person looked at do not pause it again: the guardrails now judge what happens
  // after the resume (three supervision rounds pass here), and a new failure alone is below min_finished.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await report(f, deployment, fleet[9]!, 'failed', 'flash_write_error');
  expect((await read()).state).toBe('active');
  const events = await delivered(['artifact.uploaded', 'deployment.created', 'deployment.started', 'deployment.guardrail_tripped', 'deployment.resumed']);
  expect(events.find((event) => event.event === 'deployment.guardrail_tripped')).toMatchObject({
    kinds: ['deployment.paused', 'deployment.guardrail_tripped'],
    audit_event: { actor_type: 'system', details: { guardrail: 'failure_threshold' } },
  });
}, 120_000);

test('a burst of signature_invalid failures pauses the deployment at once, other reasons do not count towards it', async () => {
  const fleet = fleetOf('signature', 8);
  const { f, deployment, read, delivered } = await startedDeployment(fleet, { guardrails: { reason_limits: [{ reason: 'signature_invalid', count: 3, window_seconds: 600 }] } });
  for (const deviceId of fleet) await check(f, deviceId);
  await report(f, deployment, fleet[0]!, 'failed', 'signature_invalid');
  await report(f, deployment, fleet[1]!, 'failed', 'signature_invalid');
  for (const deviceId of fleet.slice(2, 6)) await report(f, deployment, deviceId, 'failed', 'download_interrupted');
  expect((await read()).state).toBe('active');
  await report(f, deployment, fleet[6]!, 'failed', 'signature_invalid');
  const paused = await read();
  expect(paused).toMatchObject({ state: 'paused', guardrail_pause: { guardrail: 'reason_limit', figures: { failures: 3, count: 3, window_seconds: 600 } } });
  expect(paused.guardrail_pause.detail).toBe('3 failures with reason signature_invalid within 600 s (limit 3)');
  const events = await delivered(['artifact.uploaded', 'deployment.created', 'deployment.started', 'deployment.guardrail_tripped']);
  expect(events.find((event) => event.event === 'deployment.guardrail_tripped')!.audit_event).toMatchObject({ details: { guardrail: 'reason_limit' } });
}, 90_000);

test('a device silent after reporting progress counts as failed (no_confirmation) until it confirms', async () => {
  const fleet = fleetOf('silent', 4);
  const { f, deployment, read } = await startedDeployment(fleet, { guardrails: { confirm_timeout_seconds: 1, failure_threshold: { percent: 50, min_finished: 2 } } });
  for (const deviceId of fleet) await check(f, deviceId);
  const summaryPath = `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/summary/`;
  await report(f, deployment, fleet[0]!, 'confirmed');
  // silent-2 downloads, then says nothing more; silent-3 was only offered (no progress, not counted).
  await report(f, deployment, fleet[1]!, 'download_started');
  await report(f, deployment, fleet[1]!, 'downloaded');

  // The timer finds it silent past its timeout: 1 of 2 finished failed is 50%, and it pauses.
  const paused = await eventually(read, (d) => d.state === 'paused', 20_000);
  expect(paused.guardrail_pause).toMatchObject({ guardrail: 'failure_threshold', figures: { finished: 2, failed: 1, timed_out: 1, confirmed: 1 } });
  const summary = (await api('GET', summaryPath, { token: f.user.token })).body;
  expect(summary.failure_count).toBe(1);
  expect(summary.failures_by_reason).toEqual([{ reason: 'no_confirmation', count: 1 }]);
  // Every count agrees: the silent device is failed in the devices per status, in the device
  // states (with its reason), and in the deployment's own failure_count.
  expect(summary.devices_by_status).toMatchObject({ confirmed: 1, failed: 1, downloaded: 0, download_started: 0 });
  const states = (await api('GET', summaryPath.replace('/summary/', '/states/'), { token: f.user.token })).body as Array<{ device_id: string; status: string; reason: string }>;
  expect(states.filter((state) => state.status === 'failed')).toEqual([expect.objectContaining({ reason: 'no_confirmation' })]);
  expect((await read()).failure_count).toBe(1);
  // The states come in pages and by status, the silent device among the failed ones.
  const failedPage = await api('GET', `${summaryPath.replace('/summary/', '/states/')}?status=failed&limit=10`, { token: f.user.token });
  expect(failedPage.headers.get('x-total-count')).toBe('1');
  expect(failedPage.body).toEqual([expect.objectContaining({ status: 'failed', reason: 'no_confirmation' })]);
  // Pages follow one another in the order of the device UUIDs, each saying where the next starts.
  const statesPath = summaryPath.replace('/summary/', '/states/');
  const firstPage = await api('GET', `${statesPath}?limit=2`, { token: f.user.token });
  expect(firstPage.headers.get('x-total-count')).toBe(String(states.length));
  const secondPage = await api('GET', `${statesPath}?limit=2&after_id=${firstPage.headers.get('x-next-after-id')}`, { token: f.user.token });
  const byId = [...states].sort((a, b) => (a.device_id < b.device_id ? -1 : 1));
  expect([...firstPage.body, ...secondPage.body]).toEqual(byId.slice(0, 4));
  // An offset past 0 is refused with what to do instead.
  const offset = await api('GET', `${statesPath}?limit=2&offset=2`, { token: f.user.token });
  expect(offset.status).toBe(422);
  expect(JSON.stringify(offset.body.detail)).toMatch(/after_id/);

  // A late confirmation counts as confirmed and undoes the count.
  await report(f, deployment, fleet[1]!, 'confirmed');
  const after = (await api('GET', summaryPath, { token: f.user.token })).body;
  expect(after.failure_count).toBe(0);
  expect(after.failures_by_reason).toEqual([]);
}, 60_000);

test('a reason limit on no_confirmation trips on devices going silent, like any other reason', async () => {
  const fleet = fleetOf('quiet', 3);
  const { f, deployment, read } = await startedDeployment(fleet, { guardrails: { confirm_timeout_seconds: 1, reason_limits: [{ reason: 'no_confirmation', count: 2, window_seconds: 600 }] } });
  for (const deviceId of fleet) await check(f, deviceId);
  for (const deviceId of fleet.slice(0, 2)) await report(f, deployment, deviceId, 'flashed');
  const paused = await eventually(read, (d) => d.state === 'paused', 20_000);
  expect(paused.guardrail_pause).toMatchObject({ guardrail: 'reason_limit', figures: { failures: 2, count: 2 } });
}, 60_000);

test('guardrails and stages that make no sense are refused with the field named', async () => {
  const f = await setupProject();
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const create = (json: Record<string, unknown>) => api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, ...json } });
  const falling = await create({ stages: [{ percentage: 50 }, { percentage: 20 }] });
  expect(falling.status).toBe(400);
  expect(falling.body.detail).toBe('stages[1].percentage must be above the stage before it');
  const mismatch = await create({ rollout_percentage: 30, stages: [{ percentage: 10 }] });
  expect(mismatch.status).toBe(400);
  expect(mismatch.body.detail).toMatch(/first stage's percentage/);
  const twice = await create({ guardrails: { reason_limits: [1, 2].map(() => ({ reason: 'flash_write_error', count: 2, window_seconds: 60 })) } });
  expect(twice.status).toBe(400);
  expect(twice.body.detail).toMatch(/limited twice/);
  const unknownField = await create({ guardrails: { failure_threshold: { percent: 10 } } });
  expect(unknownField.status).toBe(422);
  expect(unknownField.body.detail[0]).toMatchObject({ loc: ['body', 'guardrails', 'failure_threshold', 'min_finished'] });
  // A deployment without either behaves as before: no guardrails, no stage.
  const plain = await create({});
  expect(plain.body).toMatchObject({ guardrails: { failure_threshold: null, reason_limits: [], confirm_timeout_seconds: null }, stages: [], stage: null, guardrail_pause: null });
});
