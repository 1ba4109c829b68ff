import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// Maintenance windows through the public API against the real services (docs/api.md,
// "Maintenance windows"): a started deployment offers its build only inside its windows, and a
// check outside them says when the next opens. The windows are placed around the stack's own
// clock; the rules to the minute, across time zones and summer time, are in
// libs/decision/src/maintenance-windows.test.ts.

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const hh = (hour: number) => `${String(hour).padStart(2, '0')}:00`;

const check = (f: ProjectFixture, deviceId: string, extra: Record<string, unknown> = {}) =>
  api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: { ...checkBody(deviceId), ...extra } });

async function startedWith(f: ProjectFixture, maintenanceWindows: unknown) {
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, maintenance_windows: maintenanceWindows } });
  expect(created.status).toBe(201);
  const started = await api('POST', `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect(started.status).toBe(200);
  return started.body;
}

test('outside its window a deployment offers nothing and says when the window opens; inside it, it offers', async () => {
  const f = await setupProject();
  expect((await check(f, 'win-1')).status).toBe(200);
  // Tomorrow (UTC) only, from 03:00 for an hour: closed now whatever the hour.
  const now = new Date();
  const tomorrow = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 3));
  const deployment = await startedWith(f, { time_zone: 'UTC', windows: [{ days: [DAYS[tomorrow.getUTCDay()]], start: '03:00', duration_minutes: 60 }] });
  expect(deployment.maintenance_windows).toEqual({ time_zone: 'UTC', in_device_local_time: false, windows: [{ days: [DAYS[tomorrow.getUTCDay()]], start: '03:00', duration_minutes: 60 }] });

  const held = await eventually(() => check(f, 'win-1'), (answer) => answer.body.status !== 'no_active_deployment');
  expect(held.body).toMatchObject({ update_available: false, status: 'not_in_rollout', window_opens_at: tomorrow.toISOString() });
  expect(held.body.message).toContain(tomorrow.toISOString());
  // The preview counts the device as offered, and says the window holds it back until then.
  const preview = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/preview/`, { token: f.user.token })).body;
  expect(preview.outcomes.offered.count).toBe(1);
  expect(preview.held_now).toEqual({ window_opens_at: tomorrow.toISOString(), caps_room: null });
  // The summary says the same, so that the rollout's headline can say what holds its devices.
  const summary = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/summary/`, { token: f.user.token })).body;
  expect(summary.held_now).toEqual({ window_opens_at: tomorrow.toISOString(), caps_room: null });
  // Never later than the usual poll, nor than a minute into the window.
  const untilOpen = (tomorrow.getTime() - Date.now()) / 1000;
  expect(held.body.poll_after_seconds).toBeGreaterThan(0);
  expect(held.body.poll_after_seconds).toBeLessThanOrEqual(untilOpen + 61);

  // A second deployment of a higher build, open every day all day, is offered beside it.
  const open = await startedWith(f, { time_zone: 'Europe/Berlin', windows: [{ days: EVERY_DAY, start: '00:00', duration_minutes: 1440 }] });
  const offered = await eventually(() => check(f, 'win-1'), (answer) => answer.body.status === 'offered');
  expect(offered.body).toMatchObject({ deployment_id: open.id, build_number: open.build_number });
  expect(offered.body.window_opens_at).toBeUndefined();
}, 60_000);

test('windows in device local time follow the offset each device reports, and the zone for one that reports none', async () => {
  const f = await setupProject();
  for (const deviceId of ['east', 'utc']) expect((await check(f, deviceId)).status).toBe(200);
  // Three hours around the hour it is now in UTC+12, which are eleven hours away in UTC.
  const opensThere = (new Date().getUTCHours() + 11) % 24;
  const deployment = await startedWith(f, { time_zone: 'UTC', in_device_local_time: true, windows: [{ days: EVERY_DAY, start: hh(opensThere), duration_minutes: 180 }] });
  expect(deployment.maintenance_windows.in_device_local_time).toBe(true);
  const east = await eventually(() => check(f, 'east', { utc_offset_minutes: 720 }), (answer) => answer.body.status !== 'no_active_deployment');
  expect(east.body.status).toBe('offered');
  const utc = await check(f, 'utc');
  expect(utc.body).toMatchObject({ status: 'not_in_rollout' });
  expect(new Date(utc.body.window_opens_at).getUTCHours()).toBe(opensThere);
  // An offset no clock has is refused like any malformed check.
  expect((await check(f, 'east', { utc_offset_minutes: 900 })).status).toBe(400);
}, 60_000);

test('windows that make no sense are refused with the field named, and nothing is created', async () => {
  const f = await setupProject();
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const create = (maintenanceWindows: unknown) =>
    api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, maintenance_windows: maintenanceWindows } });
  const window = { days: ['mon'], start: '02:00', duration_minutes: 60 };

  const unknownZone = await create({ time_zone: 'Mars/Olympus_Mons', windows: [window] });
  expect(unknownZone.status).toBe(400);
  expect(unknownZone.body.detail).toMatch(/^maintenance_windows\.time_zone names no time zone/);
  const refusedByShape = [
    [{ time_zone: 'UTC', windows: [] }, ['body', 'maintenance_windows', 'windows']],
    [{ time_zone: 'UTC', windows: [{ ...window, start: '24:00' }] }, ['body', 'maintenance_windows', 'windows', '0', 'start']],
    [{ time_zone: 'UTC', windows: [{ ...window, days: ['mon', 'mon'] }] }, ['body', 'maintenance_windows', 'windows', '0', 'days']],
    [{ time_zone: 'UTC', windows: [{ ...window, days: ['someday'] }] }, ['body', 'maintenance_windows', 'windows', '0', 'days', '0']],
    [{ time_zone: 'UTC', windows: [{ ...window, duration_minutes: 10_081 }] }, ['body', 'maintenance_windows', 'windows', '0', 'duration_minutes']],
    [{ windows: [window] }, ['body', 'maintenance_windows', 'time_zone']],
  ] as const;
  for (const [maintenanceWindows, loc] of refusedByShape) {
    const answer = await create(maintenanceWindows);
    expect([JSON.stringify(maintenanceWindows), answer.status]).toEqual([JSON.stringify(maintenanceWindows), 422]);
    expect(answer.body.detail[0].loc).toEqual(loc);
  }
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token })).body).toEqual([]);

  // Without windows, a deployment says so.
  const plain = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id } });
  expect(plain.body.maintenance_windows).toBeNull();
});
