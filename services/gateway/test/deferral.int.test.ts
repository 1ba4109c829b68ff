import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// A device (or the application on it) puts an offer off (docs/api.md, "Deferral"): the deployment
// offers it nothing before the time it gave and everything after, and a deferral is never a
// failure: no status moves, no failure counts, no guardrail trips.

const check = (f: ProjectFixture, deviceId: string) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });
const report = (f: ProjectFixture, body: Record<string, unknown>) => api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: body });
const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

/** A started deployment to the whole project, its `fleet` checked in first. */
async function guardedDeployment(f: ProjectFixture, fleet: string[]) {
  for (const deviceId of fleet) expect((await check(f, deviceId)).status).toBe(200);
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  // A guardrail that the first failure of one finished device would trip.
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, {
    token: f.user.token,
    json: { artifact_id: artifact.id, guardrails: { failure_threshold: { percent: 1, min_finished: 1 }, reason_limits: [{ reason: 'user_busy', count: 1, window_seconds: 600 }] } },
  });
  const started = await api('POST', `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect([created.status, started.status]).toEqual([201, 200]);
  return started.body as { id: string; build_number: number };
}

test('a deferred offer waits until the time the device gave, counts as no failure, and is offered again after it', async () => {
  const f = await setupProject();
  const deployment = await guardedDeployment(f, ['defer-1', 'defer-2']);
  const offered = await eventually(() => check(f, 'defer-1'), (answer) => answer.body.update_available === true);
  expect(offered.body.deployment_id).toBe(deployment.id);

  const until = inSeconds(3600);
  const deferred = await report(f, { device_id: 'defer-1', deployment_id: deployment.id, event: 'deferred', deferred_until: until, reason: 'user_busy' });
  expect(deferred.status).toBe(200);
  expect(deferred.body).toEqual({ accepted: true, final_status: 'offered' });
  // A repeat of the same deferral changes nothing.
  expect((await report(f, { device_id: 'defer-1', deployment_id: deployment.id, event: 'deferred', deferred_until: until, reason: 'user_busy' })).body).toEqual({ accepted: true, final_status: 'offered' });

  const held = await check(f, 'defer-1');
  expect(held.body).toMatchObject({ update_available: false, status: 'not_in_rollout', deferred_until: new Date(until).toISOString() });
  expect(held.body.message).toContain('deferred this update');
  expect(held.body.poll_after_seconds).toBeGreaterThan(0);
  expect(held.body.poll_after_seconds).toBeLessThanOrEqual(3600 + 61);
  // Another device of the deployment is offered as before.
  expect((await check(f, 'defer-2')).body.update_available).toBe(true);

  // The deployment says who deferred and until when, and counts no failure; its guardrails did not trip.
  const path = `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/`;
  const summary = (await api('GET', `${path}summary/`, { token: f.user.token })).body;
  expect(summary).toMatchObject({ state: 'active', failure_count: 0, failures_by_reason: [], deferred_devices: 1, deferred_until: new Date(until).toISOString() });
  expect(summary.devices_by_status.failed).toBe(0);
  expect((await api('GET', path, { token: f.user.token })).body).toMatchObject({ state: 'active', guardrail_pause: null, failure_count: 0 });

  // The device's timeline has the deferral, once.
  const [device] = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?q=defer-1`, { token: f.user.token })).body;
  const events = (await api('GET', `/api/v1/projects/${f.project.id}/devices/${device.id}/events/`, { token: f.user.token })).body as Array<Record<string, unknown>>;
  expect(events.filter((event) => event.event === 'deferred')).toEqual([expect.objectContaining({ status: 'offered', reason: 'user_busy', deferred_until: new Date(until).toISOString() })]);

  // The device's newest word counts: deferred again to two seconds from now, it is offered once they pass.
  const soon = inSeconds(2);
  expect((await report(f, { device_id: 'defer-1', deployment_id: deployment.id, event: 'deferred', deferred_until: soon })).status).toBe(200);
  expect((await check(f, 'defer-1')).body).toMatchObject({ status: 'not_in_rollout', deferred_until: new Date(soon).toISOString() });
  const again = await eventually(() => check(f, 'defer-1'), (answer) => answer.body.update_available === true, 10_000);
  expect(again.body).toMatchObject({ status: 'offered', deployment_id: deployment.id });
  expect((await api('GET', `${path}summary/`, { token: f.user.token })).body).toMatchObject({ deferred_devices: 0, deferred_until: null });
});

test('a deferral names a time ahead, within 30 days, only with the deferred event, on a deployment of the project', async () => {
  const f = await setupProject();
  const deployment = await guardedDeployment(f, ['defer-3']);
  await eventually(() => check(f, 'defer-3'), (answer) => answer.body.update_available === true);
  const refusals: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ event: 'deferred' }, 400, /deferred_until is required with deferred/],
    [{ event: 'deferred', deferred_until: inSeconds(-60) }, 400, /later than now/],
    [{ event: 'deferred', deferred_until: inSeconds(31 * 86_400) }, 400, /at most 30 days ahead/],
    [{ event: 'deferred', deferred_until: 'tomorrow' }, 400, /deferred_until/],
    // Days and hours that do not exist, which Date would roll over into the next ones.
    [{ event: 'deferred', deferred_until: `${new Date().getUTCFullYear() + 1}-02-30T00:00:00Z` }, 400, /deferred_until.*date-time/],
    [{ event: 'deferred', deferred_until: `${inSeconds(86_400).slice(0, 10)}T24:00:00Z` }, 400, /deferred_until.*date-time/],
    [{ event: 'download_started', deferred_until: inSeconds(60) }, 400, /only with the deferred event/],
    [{ event: 'deferred', deferred_until: inSeconds(60), deployment_id: '00000000-0000-4000-8000-000000000000' }, 404, /deployment/],
  ];
  for (const [body, status, detail] of refusals) {
    const refused = await report(f, { device_id: 'defer-3', deployment_id: deployment.id, ...body });
    expect([refused.status, JSON.stringify(refused.body)]).toEqual([status, expect.stringMatching(detail)]);
  }
  // Nothing of those was kept: the device is still offered the build.
  expect((await check(f, 'defer-3')).body.update_available).toBe(true);
});

test('a deferred device holds no in-progress place until it comes back, and then waits for one', async () => {
  const f = await setupProject();
  for (const deviceId of ['capped-1', 'capped-2']) expect((await check(f, deviceId)).status).toBe(200);
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, caps: { max_in_progress: 1 } } });
  const started = await api('POST', `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect(started.status).toBe(200);
  expect((await check(f, 'capped-1')).body.update_available).toBe(true);
  // The one place is taken: the other device waits.
  expect((await check(f, 'capped-2')).body.update_available).toBe(false);

  // The first puts the update off for a few seconds: its place is free meanwhile.
  const until = inSeconds(4);
  expect((await report(f, { device_id: 'capped-1', deployment_id: created.body.id, event: 'deferred', deferred_until: until })).status).toBe(200);
  const second = await eventually(() => check(f, 'capped-2'), (answer) => answer.body.update_available === true);
  expect(second.body.update_available).toBe(true);
  expect((await report(f, { device_id: 'capped-2', deployment_id: created.body.id, event: 'download_started' })).status).toBe(200);

  // Back after its deferral, the first finds the place taken and waits for it.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, new Date(until).getTime() - Date.now()) + 1_500));
  const back = await check(f, 'capped-1');
  expect(back.body).toMatchObject({ update_available: false });
  expect((await report(f, { device_id: 'capped-2', deployment_id: created.body.id, event: 'confirmed', build_number: artifact.build_number })).status).toBe(200);
  const offeredAgain = await eventually(() => check(f, 'capped-1'), (answer) => answer.body.update_available === true);
  expect(offeredAgain.body.update_available).toBe(true);
});
