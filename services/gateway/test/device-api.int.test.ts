import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// The device API, every outcome of docs/api.md's "The check decision", and the races a fleet makes.

const check = (token: string, deviceId: string, extra: Record<string, unknown> = {}) => api('POST', '/api/v1/ota/check/', { token, json: checkBody(deviceId, extra) });
const report = (token: string, json: Record<string, unknown>) => api('POST', '/api/v1/ota/status/', { token, json });

async function release(f: ProjectFixture, manifest: Record<string, unknown> = MANIFEST, fields: Record<string, string> = {}) {
  const response = await api('POST', `/api/v1/projects/${f.project.id}/release/`, { token: f.user.token, body: uploadForm(manifest, randomBinary(256), fields) });
  expect(response.status).toBe(201);
  return response.body as { deployment_id: string; build_number: number; artifact_id: string };
}

async function deviceOf(f: ProjectFixture, deviceId: string) {
  const devices = await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token });
  return devices.body.find((device: { device_id: string }) => device.device_id === deviceId);
}

describe('check outcomes', () => {
  it('answers no_active_deployment, then offered, then up_to_date', async () => {
    const f = await setupProject();
    expect((await check(f.deviceScopeToken, 'c-1')).body).toMatchObject({ update_available: false, status: 'no_active_deployment' });
    const released = await release(f);
    const offer = await check(f.deviceScopeToken, 'c-1');
    expect(offer.body).toMatchObject({ update_available: true, build_number: released.build_number, deployment_id: released.deployment_id });
    const upToDate = await check(f.deviceScopeToken, 'c-1', { current_build_number: released.build_number });
    expect(upToDate.body.status).toBe('up_to_date');
    // Every answer suggests the next check: the 1,800 s default, spread over half to one and a half times it.
    for (const answer of [offer, upToDate]) {
      expect(answer.body.poll_after_seconds).toBeGreaterThanOrEqual(900);
      expect(answer.body.poll_after_seconds).toBeLessThanOrEqual(2700);
    }
  });

  it('answers no_compatible_build for other hardware, and 400 when a declared dimension is missing', async () => {
    const f = await setupProject();
    await release(f, { ...MANIFEST, board_id: 'devkit-c', hardware_revision: 'v2' });
    expect((await check(f.deviceScopeToken, 'hw-1', { board_id: 'other', hardware_revision: 'v2' })).body.status).toBe('no_compatible_build');
    expect((await check(f.deviceScopeToken, 'hw-1', { chip_family: 'esp32c3', board_id: 'devkit-c', hardware_revision: 'v2' })).body.status).toBe(
      'no_compatible_build',
    );
    const missing = await check(f.deviceScopeToken, 'hw-1', { board_id: 'devkit-c' });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toContain('hardware_revision');
    expect((await check(f.deviceScopeToken, 'hw-1', { board_id: 'devkit-c', hardware_revision: 'v2' })).body.update_available).toBe(true);
  });

  it('answers not_in_rollout outside the cohort, and offers once a ramp includes the device', async () => {
    const f = await setupProject();
    const released = await release(f, MANIFEST, { rollout_percentage: '0' });
    expect((await check(f.deviceScopeToken, 'r-1')).body.status).toBe('not_in_rollout');
    await api('POST', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/transition/`, {
      token: f.user.token,
      json: { action: 'ramp', rollout_percentage: 100 },
    });
    expect((await check(f.deviceScopeToken, 'r-1')).body.update_available).toBe(true);
  });

  it('stops offering a paused deployment at once, and offers it again on resume', async () => {
    const f = await setupProject();
    const released = await release(f);
    const transition = (action: string) =>
      api('POST', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/transition/`, { token: f.user.token, json: { action } });
    await transition('pause');
    expect((await check(f.deviceScopeToken, 'p-1')).body.status).toBe('no_active_deployment');
    await transition('resume');
    expect((await check(f.deviceScopeToken, 'p-1')).body.update_available).toBe(true);
  });

  it('answers device_inactive for a deactivated device, recording no heartbeat', async () => {
    const f = await setupProject();
    await check(f.deviceScopeToken, 'i-1', { version_label: 'before' });
    const device = await deviceOf(f, 'i-1');
    await api('PATCH', `/api/v1/projects/${f.project.id}/devices/${device.id}/`, { token: f.user.token, json: { active: false } });
    expect((await check(f.deviceScopeToken, 'i-1', { version_label: 'after' })).body.status).toBe('device_inactive');
    expect((await deviceOf(f, 'i-1')).current_version_label).toBe('before');
  });

  it('answers over_limit at the device cap and registers nothing', async () => {
    const f = await setupProject({ maxDevices: 1 });
    expect((await check(f.deviceScopeToken, 'cap-1')).body.status).toBe('no_active_deployment');
    expect((await check(f.deviceScopeToken, 'cap-2')).body).toMatchObject({ update_available: false, status: 'over_limit' });
    const devices = await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token });
    expect(devices.body.map((device: { device_id: string }) => device.device_id)).toEqual(['cap-1']);
  });

  it('answers token_required when the shared token speaks for a device that has its own', async () => {
    const f = await setupProject();
    const provisioned = await api('POST', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token, json: { device_id: 'own-token' } });
    expect((await check(f.deviceScopeToken, 'own-token')).body).toMatchObject({ update_available: false, status: 'token_required' });
    expect((await check(provisioned.body.token, 'own-token')).body.status).toBe('no_active_deployment');
    // Revoking the device's token lets the fleet token speak for it again.
    await api('DELETE', `/api/v1/projects/${f.project.id}/devices/${provisioned.body.id}/token/`, { token: f.user.token });
    expect((await check(f.deviceScopeToken, 'own-token')).body.status).toBe('no_active_deployment');
  });

  it('serves a device with its own token: check, offer and reports without device_id', async () => {
    const f = await setupProject();
    const provisioned = await api('POST', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token, json: { device_id: 'solo-1' } });
    const released = await release(f);
    const { device_id: _omitted, ...body } = checkBody('solo-1');
    const offer = await api('POST', '/api/v1/ota/check/', { token: provisioned.body.token, json: body });
    expect(offer.body).toMatchObject({ update_available: true, deployment_id: released.deployment_id, build_number: released.build_number });
    const failed = await report(provisioned.body.token, { deployment_id: released.deployment_id, event: 'failed', reason: 'flash_write_failed' });
    expect(failed.body).toEqual({ accepted: true, final_status: 'failed' });
    const detail = await api('GET', `/api/v1/projects/${f.project.id}/devices/${provisioned.body.id}/`, { token: f.user.token });
    expect(detail.body).toMatchObject({ device_id: 'solo-1', last_ota_status: 'failed', last_ota_reason: 'flash_write_failed' });
    // A failed device is offered the build again; only a roll-back excludes it.
    expect((await api('POST', '/api/v1/ota/check/', { token: provisioned.body.token, json: body })).body.update_available).toBe(true);
  });

  it('records the heartbeat and the reported fields', async () => {
    const f = await setupProject();
    await check(f.deviceScopeToken, 'hb-1', {
      version_label: '0.9.1',
      current_hash: 'ab'.repeat(32),
      board_id: 'devkit',
      hardware_revision: 'r3',
      partition_profile: 'ota_4mb',
      nvs_schema_version: 2,
      security_mode: 'basic',
      channel: 'ignored',
    });
    expect(await deviceOf(f, 'hb-1')).toMatchObject({
      current_version_label: '0.9.1',
      current_hash: 'ab'.repeat(32),
      board_id: 'devkit',
      hardware_revision: 'r3',
      partition_profile: 'ota_4mb',
      nvs_schema_version: 2,
      security_mode: 'basic',
      channel_id: f.defaultChannelId,
      last_seen: expect.any(String),
    });
  });

  it('records the decision of every outcome', async () => {
    const f = await setupProject({ maxDevices: 1 });
    await check(f.deviceScopeToken, 'dec-1');
    const device = await deviceOf(f, 'dec-1');
    const events = await eventually(
      () => api('GET', `/api/v1/projects/${f.project.id}/devices/${device.id}/check-events/?status=no_active_deployment`, { token: f.user.token }),
      (response) => response.body.length === 1,
    );
    expect(events.body[0]).toMatchObject({ decision: 'no_update', status: 'no_active_deployment', device_id: 'dec-1' });
  });
});

describe('races of a fleet', () => {
  it('registers a device once when its first checks arrive together', async () => {
    const f = await setupProject();
    const answers = await Promise.all(Array.from({ length: 10 }, () => check(f.deviceScopeToken, 'twin')));
    expect(answers.map((answer) => `${answer.status} ${answer.body.status ?? answer.body.detail}`)).toEqual(Array(10).fill('200 no_active_deployment'));
    const devices = await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token });
    expect(devices.body).toHaveLength(1);
  });

  it('never lets new devices checking together push the owner past the cap', async () => {
    const f = await setupProject({ maxDevices: 4 });
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => check(f.deviceScopeToken, `wave-${i}`)));
    expect(answers.filter((answer) => answer.body.status === 'no_active_deployment')).toHaveLength(4);
    expect(answers.filter((answer) => answer.body.status === 'over_limit')).toHaveLength(11);
    expect((await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body).toHaveLength(4);
  });
});

describe('status events', () => {
  const EVENTS = ['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'rebooted', 'confirmed'];

  it('accepts the whole vocabulary in order, and confirmed sets the build', async () => {
    const f = await setupProject();
    const released = await release(f);
    await check(f.deviceScopeToken, 'ev-1');
    const finals = [];
    for (const event of EVENTS) {
      const answer = await report(f.deviceScopeToken, { device_id: 'ev-1', deployment_id: released.deployment_id, event, build_number: released.build_number });
      expect(answer.body.accepted).toBe(true);
      finals.push(answer.body.final_status);
    }
    expect(finals).toEqual(['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'reboot', 'confirmed']);
    expect(await deviceOf(f, 'ev-1')).toMatchObject({ current_build_number: released.build_number, last_ota_status: 'confirmed' });
  });

  it('never moves a status backwards on a late event', async () => {
    const f = await setupProject();
    const released = await release(f);
    await check(f.deviceScopeToken, 'late-1');
    await report(f.deviceScopeToken, { device_id: 'late-1', deployment_id: released.deployment_id, event: 'flashed' });
    const late = await report(f.deviceScopeToken, { device_id: 'late-1', deployment_id: released.deployment_id, event: 'downloaded' });
    expect(late.body).toEqual({ accepted: true, final_status: 'flashed' });
    const states = await api('GET', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/states/`, { token: f.user.token });
    expect(states.body.map((state: { status: string }) => state.status)).toEqual(['flashed']);
    // The device record holds the same: registry's one update moves the status only up within a deployment.
    expect(await deviceOf(f, 'late-1')).toMatchObject({ last_ota_status: 'flashed' });
  });

  it('keeps reasons verbatim, counts every failed and the first rolled_back, even when repeated at once', async () => {
    const f = await setupProject();
    const released = await release(f);
    const failing = { deployment_id: released.deployment_id, event: 'failed', reason: 'checksum_mismatch' };
    await check(f.deviceScopeToken, 'f-1');
    await check(f.deviceScopeToken, 'f-2');
    await report(f.deviceScopeToken, { ...failing, device_id: 'f-1' });
    await report(f.deviceScopeToken, { ...failing, device_id: 'f-1', reason: 'download_failed' });
    const rollbacks = await Promise.all(
      Array.from({ length: 6 }, () => report(f.deviceScopeToken, { device_id: 'f-2', deployment_id: released.deployment_id, event: 'rolled_back', reason: 'confirm_timeout' })),
    );
    expect(rollbacks.every((answer) => answer.body.accepted && answer.body.final_status === 'rolled_back')).toBe(true);

    const deployment = await api('GET', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/`, { token: f.user.token });
    expect(deployment.body.failure_count).toBe(3);
    expect(await deviceOf(f, 'f-1')).toMatchObject({ last_ota_status: 'failed', last_ota_reason: 'download_failed' });
    expect(await deviceOf(f, 'f-2')).toMatchObject({ last_ota_status: 'rolled_back', last_ota_reason: 'confirm_timeout' });
    // A rolled-back deployment is not offered to that device again.
    expect((await check(f.deviceScopeToken, 'f-2')).body).toMatchObject({ update_available: false, status: 'not_in_rollout' });
    expect((await check(f.deviceScopeToken, 'f-1')).body.update_available).toBe(true);
  });

  it('offers a newer deployment to a device that rolled back an older one', async () => {
    const f = await setupProject();
    const first = await release(f);
    await check(f.deviceScopeToken, 'rb-1');
    await report(f.deviceScopeToken, { device_id: 'rb-1', deployment_id: first.deployment_id, event: 'rolled_back', reason: 'boot_failed' });
    expect((await check(f.deviceScopeToken, 'rb-1')).body).toMatchObject({ status: 'not_in_rollout', message: expect.stringContaining('rolled back') });
    const second = await release(f, { ...MANIFEST, version_label: '1.0.1' });
    expect((await check(f.deviceScopeToken, 'rb-1')).body).toMatchObject({ update_available: true, deployment_id: second.deployment_id });
  });

  it('accepts reports for a deployment that is no longer active', async () => {
    const f = await setupProject();
    const released = await release(f);
    await check(f.deviceScopeToken, 'paused-1');
    await api('POST', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/transition/`, { token: f.user.token, json: { action: 'pause' } });
    const late = await report(f.deviceScopeToken, { device_id: 'paused-1', deployment_id: released.deployment_id, event: 'downloaded' });
    expect(late.body).toEqual({ accepted: true, final_status: 'downloaded' });
    // Another project's deployment stays invisible, active or not.
    const other = await setupProject();
    await check(other.deviceScopeToken, 'paused-1');
    expect((await report(other.deviceScopeToken, { device_id: 'paused-1', deployment_id: released.deployment_id, event: 'downloaded' })).status).toBe(404);
  });

  it('treats concurrent repeats of confirmed as one', async () => {
    const f = await setupProject();
    const released = await release(f);
    await check(f.deviceScopeToken, 'dup-1');
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => report(f.deviceScopeToken, { device_id: 'dup-1', deployment_id: released.deployment_id, event: 'confirmed', build_number: released.build_number })),
    );
    expect(answers.every((answer) => answer.body.accepted && answer.body.final_status === 'confirmed')).toBe(true);
    const states = await api('GET', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/states/`, { token: f.user.token });
    expect(states.body).toHaveLength(1);
    expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/`, { token: f.user.token })).body.failure_count).toBe(0);
  });

  it.each([
    ['an unknown event', { event: 'exploded' }, 400],
    ['confirmed without build_number', { event: 'confirmed' }, 400],
    ['a deployment that does not exist', { event: 'downloaded', deployment_id: '00000000-0000-4000-8000-000000000000' }, 404],
    ['a device that does not exist', { event: 'downloaded', device_id: 'nobody' }, 404],
    ['a deployment id that is not a UUID', { event: 'downloaded', deployment_id: 'x' }, 400],
  ])('refuses %s', async (_name, overrides, status) => {
    const f = await setupProject();
    const released = await release(f);
    await check(f.deviceScopeToken, 'bad-1');
    const answer = await report(f.deviceScopeToken, { device_id: 'bad-1', deployment_id: released.deployment_id, ...overrides });
    expect(answer.status).toBe(status);
    expect(answer.body.detail).toBeDefined();
  });

  it('refuses a report with the shared token for a device that has its own', async () => {
    const f = await setupProject();
    const released = await release(f);
    await api('POST', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token, json: { device_id: 'owned' } });
    expect((await report(f.deviceScopeToken, { device_id: 'owned', deployment_id: released.deployment_id, event: 'downloaded' })).status).toBe(403);
    // Refused before anything was stored: no status in the deployment, nothing on the device.
    const states = await api('GET', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/states/`, { token: f.user.token });
    expect(states.body).toEqual([]);
    expect((await deviceOf(f, 'owned')).last_ota_status).not.toBe('downloaded');
    // The same refusal on a deployment that is no longer active, where rollout is asked second.
    await api('POST', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/transition/`, { token: f.user.token, json: { action: 'pause' } });
    expect((await report(f.deviceScopeToken, { device_id: 'owned', deployment_id: released.deployment_id, event: 'downloaded' })).status).toBe(403);
    expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/states/`, { token: f.user.token })).body).toEqual([]);
  });

  it('moves the device to a newer deployment\'s status, and keeps the failure reason until a later event', async () => {
    const f = await setupProject();
    const first = await release(f);
    await check(f.deviceScopeToken, 'two-1');
    await report(f.deviceScopeToken, { device_id: 'two-1', deployment_id: first.deployment_id, event: 'failed', reason: 'flash_error' });
    await report(f.deviceScopeToken, { device_id: 'two-1', deployment_id: first.deployment_id, event: 'downloaded' });
    expect(await deviceOf(f, 'two-1')).toMatchObject({ last_ota_status: 'failed', last_ota_reason: 'flash_error' });
    const second = await release(f, { ...MANIFEST, version_label: '1.0.1' });
    await report(f.deviceScopeToken, { device_id: 'two-1', deployment_id: second.deployment_id, event: 'download_started' });
    expect(await deviceOf(f, 'two-1')).toMatchObject({ last_ota_status: 'download_started', last_ota_reason: '' });
  });
});

describe('what a check writes down', () => {
  it('is readable as soon as the check is answered, and last_seen advances on every check', async () => {
    const f = await setupProject();
    const read = async () => {
      const device = await deviceOf(f, 'seen-1');
      const events = await api('GET', `/api/v1/projects/${f.project.id}/devices/${device.id}/check-events/`, { token: f.user.token });
      return { device, events: events.body };
    };
    expect((await check(f.deviceScopeToken, 'seen-1', { version_label: 'v1' })).status).toBe(200);
    const first = await read();
    expect(first.device).toMatchObject({ last_check_status: 'no_active_deployment', current_version_label: 'v1' });
    expect(first.device.last_seen).toBe(first.device.last_check_at);
    expect(first.events).toHaveLength(1);
    expect(first.events[0]).toMatchObject({ status: 'no_active_deployment', reported_version: 'v1', created_at: first.device.last_check_at });

    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const released = await release(f);
    expect((await check(f.deviceScopeToken, 'seen-1', { version_label: 'v1', current_build_number: 0 })).body.update_available).toBe(true);
    const second = await read();
    expect(new Date(second.device.last_seen).getTime()).toBeGreaterThanOrEqual(new Date(first.device.last_seen).getTime() + 1_000);
    expect(second.device).toMatchObject({ last_check_status: 'offered', last_seen: second.device.last_check_at });
    expect(second.events.map((event: { status: string }) => event.status)).toEqual(['offered', 'no_active_deployment']);
    expect(second.events[0]).toMatchObject({ deployment_id: released.deployment_id, artifact_build_number: released.build_number, created_at: second.device.last_check_at });
  });

  it('records no heartbeat for an inactive device, but records its check', async () => {
    const f = await setupProject();
    await check(f.deviceScopeToken, 'quiet-1');
    const before = await deviceOf(f, 'quiet-1');
    await api('PATCH', `/api/v1/projects/${f.project.id}/devices/${before.id}/`, { token: f.user.token, json: { active: false } });
    expect((await check(f.deviceScopeToken, 'quiet-1', { version_label: 'changed' })).body.status).toBe('device_inactive');
    const after = await deviceOf(f, 'quiet-1');
    expect(after).toMatchObject({ last_seen: before.last_seen, current_version_label: before.current_version_label, last_check_status: 'device_inactive' });
    const events = await api('GET', `/api/v1/projects/${f.project.id}/devices/${before.id}/check-events/`, { token: f.user.token });
    expect(events.body[0].status).toBe('device_inactive');
  });
});
