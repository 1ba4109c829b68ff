import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// The device health a check may carry, and the health guardrail's settings, as the API takes and
// refuses them (docs/api.md, "Device health"). The guardrail pausing a crash-looping build is in
// libs/simulator/test/health-regression.int.test.ts; its statistics in
// services/rollout/src/domain/health-regression.test.ts.

const HEALTH = { reset_reason: 'panic', boots: 4, abnormal_boots: 1, uptime_seconds: 7200.5, min_free_heap: 123_456 };
const check = (f: ProjectFixture, deviceId: string, health: unknown) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: { ...checkBody(deviceId), health } });

test('a check takes health, and refuses a malformed one with a 400 that names the field', async () => {
  const f = await setupProject();
  expect((await check(f, 'health-1', HEALTH)).status).toBe(200);
  // Reported again: a check with health answers as one without it.
  const again = await check(f, 'health-1', { ...HEALTH, boots: 5, uptime_seconds: 9000 });
  expect(again.status).toBe(200);
  expect(again.body.status).toBe('no_active_deployment');
  // The device's page shows what its last check reported, with the build it ran.
  const [device] = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?q=health-1`, { token: f.user.token })).body;
  expect(device.health).toEqual({ ...HEALTH, boots: 5, uptime_seconds: 9000, build_number: 0, reported_at: expect.any(String) });

  const refusals: Array<[unknown, RegExp]> = [
    [{ ...HEALTH, reset_reason: 'cosmic_ray' }, /reset_reason/],
    [{ ...HEALTH, boots: 0 }, /boots/],
    [{ ...HEALTH, uptime_seconds: -1 }, /uptime_seconds/],
    [{ reset_reason: 'panic', boots: 1, uptime_seconds: 1 }, /abnormal_boots/],
    [{ ...HEALTH, abnormal_boots: 5 }, /abnormal_boots must be at most health.boots/],
    ['healthy', /health/],
  ];
  for (const [health, named] of refusals) {
    const refused = await check(f, 'health-2', health);
    expect([refused.status, JSON.stringify(refused.body)]).toEqual([400, expect.stringMatching(named)]);
  }
});

test('the health guardrail takes its defaults from {}, refuses settings out of range, and reads back in the deployment and its health', async () => {
  const f = await setupProject();
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const create = (guardrails: unknown) => api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, guardrails } });

  for (const wrong of [{ significance: 0.5 }, { significance: 0 }, { min_devices: 0 }, { margin_percent: -1 }, { min_device_hours: 0 }, { p: 1 }]) {
    const refused = await create({ health_regression: wrong });
    expect([refused.status, JSON.stringify(refused.body)]).toEqual([422, expect.stringContaining('health_regression')]);
  }
  const chosen = await create({ health_regression: { margin_percent: 100, min_devices: 5 } });
  expect(chosen.status).toBe(201);
  expect(chosen.body.guardrails.health_regression).toEqual({ margin_percent: 100, significance: 0.001, min_devices: 5, min_device_hours: 50 });
  const without = await create({});
  expect(without.body.guardrails.health_regression).toBeNull();

  // Nothing counted yet: both sides empty, and no periods.
  const health = await api('GET', `/api/v1/projects/${f.project.id}/deployments/${chosen.body.id}/health/`, { token: f.user.token });
  expect(health.status).toBe(200);
  expect(health.body).toEqual({
    judging: false,
    not_judging_because: 'the deployment is draft: only an active deployment is judged',
    judged_since: null,
    period_minutes: 15,
    updated: { devices: 0, device_hours: 0, abnormal_resets: 0, resets_per_1000_device_hours: null },
    previous: { devices: 0, device_hours: 0, abnormal_resets: 0, resets_per_1000_device_hours: null },
    periods: [],
  });
  const other = await setupProject();
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/${chosen.body.id}/health/`, { token: other.user.token })).status).toBe(404);
});

test("a trial the bootloader abandoned is an abnormal reset of the deployment's build, counted once on its updated side", async () => {
  const f = await setupProject();
  expect((await check(f, 'trial-1', HEALTH)).status).toBe(200);
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const deployments = `/api/v1/projects/${f.project.id}/deployments/`;
  const created = await api('POST', deployments, { token: f.user.token, json: { artifact_id: artifact.id, guardrails: { health_regression: {} } } });
  expect((await api('POST', `${deployments}${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } })).status).toBe(200);
  expect((await check(f, 'trial-1', HEALTH)).body.update_available).toBe(true);
  const report = () =>
    api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: 'trial-1', deployment_id: created.body.id, event: 'rolled_back', reason: 'boot_failed' } });
  // Sent until accepted, as devices do: the repeat counts nothing more.
  expect((await report()).status).toBe(200);
  expect((await report()).status).toBe(200);
  const health = await api('GET', `${deployments}${created.body.id}/health/`, { token: f.user.token });
  expect(health.body.updated).toMatchObject({ devices: 1, abnormal_resets: 1 });
  expect(health.body.previous.abnormal_resets).toBe(0);
});

test("a device that claims a century of uptime counts only the time the registry saw, on either side", async () => {
  const f = await setupProject();
  const deployments = `/api/v1/projects/${f.project.id}/deployments/`;
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const century = 100 * 365.25 * 86_400;
  const report = (deviceId: string, build: number, uptime: number) =>
    api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: { ...checkBody(deviceId, { current_build_number: build }), health: { reset_reason: 'power_on', boots: 1, abnormal_boots: 0, uptime_seconds: uptime } } });
  // One liar on the build (it would hide a crash loop), one on the build before (it would force a
  // pause), and a firmware that reports milliseconds: each reports twice, a second apart.
  const liars: Array<[string, number, number, number]> = [
    ['updated-liar', artifact.build_number, 60, century],
    ['previous-liar', 0, 60, century],
    ['milliseconds', artifact.build_number, 60_000, 61_000 + 3_600_000],
  ];
  for (const [deviceId, build, first] of liars) expect((await report(deviceId, build, first)).status).toBe(200);
  const created = await api('POST', deployments, { token: f.user.token, json: { artifact_id: artifact.id, guardrails: { health_regression: {} } } });
  const started = await api('POST', `${deployments}${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect([started.status, started.body.detail]).toEqual([200, undefined]);
  const sent = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  for (const [deviceId, build, , second] of liars) expect((await report(deviceId, build, second)).status).toBe(200);
  // The first reports came before the start: from the second report on, what the clock saw since them.
  const elapsed = (Date.now() - sent) / 1000 + 1;
  const health = await eventually(
    async () => (await api('GET', `${deployments}${created.body.id}/health/`, { token: f.user.token })).body,
    (figures) => figures.updated.device_hours > 0 && figures.previous.device_hours > 0,
  );
  // The test stack's registry runs a device's clock 3,600 times faster (HEALTH_TIME_SCALE): one
  // second is at most an hour a device, where a century was claimed.
  expect(health.updated.device_hours).toBeLessThanOrEqual(2 * elapsed);
  expect(health.previous.device_hours).toBeLessThanOrEqual(elapsed);
});

test('devices whose first health report comes on the new build are counted, and the API says what the guardrail waits for', async () => {
  const f = await setupProject();
  const deployments = `/api/v1/projects/${f.project.id}/deployments/`;
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  for (const unit of ['quiet-1', 'quiet-2']) expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(unit) })).status).toBe(200);
  const created = await api('POST', deployments, { token: f.user.token, json: { artifact_id: artifact.id, guardrails: { health_regression: { min_devices: 2, min_device_hours: 1 } } } });
  expect((await api('POST', `${deployments}${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } })).status).toBe(200);
  // Their firmware reports health from the new build on: the first report is all there is.
  for (const unit of ['quiet-1', 'quiet-2']) {
    const checked = await api('POST', '/api/v1/ota/check/', {
      token: f.deviceScopeToken,
      json: { ...checkBody(unit, { current_build_number: artifact.build_number }), health: { reset_reason: 'power_on', boots: 1, abnormal_boots: 0, uptime_seconds: 30 } },
    });
    expect(checked.status).toBe(200);
  }
  const health = await eventually(
    async () => (await api('GET', `${deployments}${created.body.id}/health/`, { token: f.user.token })).body,
    (figures) => figures.updated.devices === 2,
  );
  expect(health.updated.devices).toBe(2);
  expect(health.judging).toBe(false);
  expect(health.not_judging_because).toBe('waiting for enough to judge: 0 of 1 device-hours on the build, 0 of 2 devices not yet updated, 0 of 1 device-hours not yet updated');
});
