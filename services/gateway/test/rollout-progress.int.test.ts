import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// What the console draws from: a deployment's summary, a device's lifecycle events, and the
// channel move. Each read straight after the writes it reflects, with no waiting.

const check = (f: ProjectFixture, deviceId: string) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });
const report = (f: ProjectFixture, json: Record<string, unknown>) => api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json });

async function canary(f: ProjectFixture, devices: string[]) {
  const group = (await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'canary' } })).body;
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(128)) })).body;
  for (const deviceId of devices) {
    await check(f, deviceId);
    const uuid = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body.find((d: { device_id: string }) => d.device_id === deviceId).id;
    expect((await api('POST', `/api/v1/projects/${f.project.id}/groups/${group.id}/members/`, { token: f.user.token, json: { device_id: uuid } })).status).toBe(201);
  }
  const deployment = (
    await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, target_group_ids: [group.id] } })
  ).body;
  return { group, artifact, deployment };
}

describe('deployment summary', () => {
  it('counts devices per current status, failures per reason and the devices targeted, in any state', async () => {
    const f = await setupProject();
    const canaries = ['s-1', 's-2', 's-3', 's-4', 's-5', 's-6'];
    await check(f, 'outside-1'); // in the project, not in the canary group
    const { deployment } = await canary(f, canaries);
    const summaryPath = `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/summary/`;

    const draft = await api('GET', summaryPath, { token: f.user.token });
    expect(draft.status).toBe(200);
    expect(draft.body).toMatchObject({ deployment_id: deployment.id, state: 'draft', targeted_devices: 6, failure_count: 0, failures_by_reason: [] });
    expect(draft.body.devices_by_status.pending).toBe(6);

    await api('POST', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/transition/`, { token: f.user.token, json: { action: 'start' } });
    for (const deviceId of canaries) expect((await check(f, deviceId)).body.update_available).toBe(true);
    const steps: Record<string, string[]> = {
      // s-1 reports every step; s-2 skips to confirmed; s-3 stops after downloading.
      's-1': ['download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed'],
      's-2': ['confirmed'],
      's-3': ['download_started', 'downloaded'],
    };
    for (const [deviceId, events] of Object.entries(steps)) {
      for (const event of events) {
        const accepted = await report(f, { device_id: deviceId, deployment_id: deployment.id, event, ...(event === 'confirmed' ? { build_number: deployment.build_number } : {}) });
        expect(accepted.body.accepted).toBe(true);
      }
    }
    // s-4 fails twice with one reason (each report counts), s-5 with another; s-6 rolls back.
    await report(f, { device_id: 's-4', deployment_id: deployment.id, event: 'failed', reason: 'checksum_mismatch' });
    await report(f, { device_id: 's-4', deployment_id: deployment.id, event: 'failed', reason: 'checksum_mismatch' });
    await report(f, { device_id: 's-5', deployment_id: deployment.id, event: 'failed', reason: 'signature_invalid' });
    await report(f, { device_id: 's-6', deployment_id: deployment.id, event: 'rolled_back', reason: 'confirm_timeout' });

    const summary = (await api('GET', summaryPath, { token: f.user.token })).body;
    expect(summary.devices_by_status).toEqual({
      pending: 0,
      offered: 0,
      download_started: 0,
      downloaded: 1,
      flashed: 0,
      validated: 0,
      reboot: 0,
      confirmed: 2,
      failed: 2,
      rolled_back: 1,
    });
    expect(summary.failure_count).toBe(4);
    expect(summary.failures_by_reason).toEqual([
      { reason: 'checksum_mismatch', count: 2 },
      { reason: 'confirm_timeout', count: 1 },
      { reason: 'signature_invalid', count: 1 },
    ]);
    // The same figures as the deployment's own counter and its per-device states.
    expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/`, { token: f.user.token })).body.failure_count).toBe(4);
    const states = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/states/`, { token: f.user.token })).body;
    expect(states.filter((state: { status: string }) => state.status === 'confirmed')).toHaveLength(2);

    // A device that confirms after failing is counted where it is now.
    await report(f, { device_id: 's-5', deployment_id: deployment.id, event: 'confirmed', build_number: deployment.build_number });
    expect((await api('GET', summaryPath, { token: f.user.token })).body.devices_by_status).toMatchObject({ confirmed: 3, failed: 1 });
  });

  it('is 404 for a deployment of another project or one that does not exist', async () => {
    const f = await setupProject();
    const other = await setupProject();
    const { deployment } = await canary(other, ['x-1']);
    expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/summary/`, { token: f.user.token })).status).toBe(404);
    expect((await api('GET', `/api/v1/projects/${other.project.id}/deployments/${deployment.id}/summary/`, { token: f.user.token })).status).toBe(404);
    expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/not-a-uuid/summary/`, { token: f.user.token })).status).toBe(404);
  });
});

describe('device lifecycle events', () => {
  it('lists what the device reported and had accepted, newest first, right after each report, with limit and since', async () => {
    const f = await setupProject();
    const { deployment } = await canary(f, ['e-1']);
    await api('POST', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/transition/`, { token: f.user.token, json: { action: 'start' } });
    await check(f, 'e-1');
    const uuid = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body[0].id;
    const path = `/api/v1/projects/${f.project.id}/devices/${uuid}/events/`;

    await report(f, { device_id: 'e-1', deployment_id: deployment.id, event: 'download_started' });
    expect((await api('GET', path, { token: f.user.token })).body.map((event: { event: string }) => event.event)).toEqual(['download_started']);
    await report(f, { device_id: 'e-1', deployment_id: deployment.id, event: 'failed', reason: 'flash_write_failed', detail: { partition: 'ota_1', errno: -5 } });
    await report(f, { device_id: 'e-1', deployment_id: deployment.id, event: 'rebooted' });
    await report(f, { device_id: 'e-1', deployment_id: deployment.id, event: 'confirmed', build_number: deployment.build_number });
    // Refused reports are not events of the device.
    expect((await report(f, { device_id: 'e-1', deployment_id: deployment.id, event: 'exploded' })).status).toBe(400);

    const events = (await api('GET', path, { token: f.user.token })).body;
    expect(events.map((event: { event: string }) => event.event)).toEqual(['confirmed', 'rebooted', 'failed', 'download_started']);
    expect(events[0]).toMatchObject({ deployment_id: deployment.id, status: 'confirmed', build_number: deployment.build_number, reason: null, detail: null });
    expect(events[1]).toMatchObject({ event: 'rebooted', status: 'reboot' });
    expect(events[2]).toMatchObject({ status: 'failed', reason: 'flash_write_failed', detail: { partition: 'ota_1', errno: -5 } });

    expect((await api('GET', `${path}?limit=2`, { token: f.user.token })).body).toEqual(events.slice(0, 2));
    expect((await api('GET', `${path}?limit=500`, { token: f.user.token })).body).toEqual(events);
    const since = await api('GET', `${path}?since=${encodeURIComponent(events[1].created_at)}`, { token: f.user.token });
    expect(since.body.map((event: { id: string }) => event.id)).toEqual(events.filter((event: { created_at: string }) => event.created_at >= events[1].created_at).map((event: { id: string }) => event.id));
    expect((await api('GET', `${path}?limit=0`, { token: f.user.token })).status).toBe(422);
    expect((await api('GET', `${path}?since=yesterday`, { token: f.user.token })).status).toBe(422);
  });

  it('lists the newest 100 per device, every failure an event of its own', async () => {
    const f = await setupProject();
    const { deployment } = await canary(f, ['many-1']);
    await api('POST', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/transition/`, { token: f.user.token, json: { action: 'start' } });
    // Each failure is an event of its own; download_started, sent every tenth time, is stored once.
    for (let i = 0; i < 120; i += 1) {
      const event = i % 10 === 0 ? 'download_started' : 'failed';
      expect((await report(f, { device_id: 'many-1', deployment_id: deployment.id, event, reason: `attempt_${i}` })).body.accepted).toBe(true);
    }
    const uuid = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body[0].id;
    const path = `/api/v1/projects/${f.project.id}/devices/${uuid}/events/`;
    const events = await api('GET', path, { token: f.user.token });
    const failures = Array.from({ length: 120 }, (_, i) => 119 - i).filter((i) => i % 10 !== 0);
    expect(events.body.map((event: { reason: string }) => event.reason)).toEqual(failures.slice(0, 100).map((i) => `attempt_${i}`));
    expect(events.body.every((event: { event: string }) => event.event === 'failed')).toBe(true);
  });

  it('lists a repeated status once, and every failure', async () => {
    const f = await setupProject();
    const { deployment } = await canary(f, ['few-1']);
    await api('POST', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/transition/`, { token: f.user.token, json: { action: 'start' } });
    const sent = ['download_started', 'download_started', 'failed', 'download_started', 'failed', 'download_started'];
    for (const [i, event] of sent.entries()) {
      expect((await report(f, { device_id: 'few-1', deployment_id: deployment.id, event, reason: `attempt_${i}` })).body.accepted).toBe(true);
    }
    const uuid = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body[0].id;
    const events = await api('GET', `/api/v1/projects/${f.project.id}/devices/${uuid}/events/`, { token: f.user.token });
    expect(events.body.map((event: { event: string; reason: string }) => [event.event, event.reason])).toEqual([
      ['failed', 'attempt_4'],
      ['failed', 'attempt_2'],
      ['download_started', 'attempt_0'],
    ]);
  });
});

describe('channel move', () => {
  it('moves a device to another channel of the project, audited; another project\'s channel is 400', async () => {
    const f = await setupProject();
    const other = await setupProject();
    await check(f, 'move-1');
    const device = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body[0];
    const beta = (await api('POST', `/api/v1/projects/${f.project.id}/channels/`, { token: f.user.token, json: { name: 'beta' } })).body;
    const moved = await api('PATCH', `/api/v1/projects/${f.project.id}/devices/${device.id}/`, { token: f.user.token, json: { channel_id: beta.id } });
    expect(moved.status).toBe(200);
    expect(moved.body.channel_id).toBe(beta.id);
    const foreign = await api('PATCH', `/api/v1/projects/${f.project.id}/devices/${device.id}/`, { token: f.user.token, json: { channel_id: other.defaultChannelId } });
    expect(foreign.status).toBe(400);
    expect(typeof foreign.body.detail).toBe('string');
    expect((await api('GET', `/api/v1/projects/${f.project.id}/devices/${device.id}/`, { token: f.user.token })).body.channel_id).toBe(beta.id);
    const audit = await eventually(
      () => api('GET', `/api/v1/projects/${f.project.id}/audit/`, { token: f.user.token }),
      (response) => response.body.some((event: { action: string }) => event.action === 'device.updated'),
    );
    expect(audit.body.find((event: { action: string }) => event.action === 'device.updated')).toMatchObject({ target_id: device.id });
  });
});
