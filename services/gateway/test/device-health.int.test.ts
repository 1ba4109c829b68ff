import { MANIFEST, api, checkBody, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

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
