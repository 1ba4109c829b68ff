import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// Whether an offer still stands (docs/api.md, "Stopping devices mid-update"): what a device asks
// between chunks and before it switches its boot slot, and the `stopped` report it sends after.

jest.setTimeout(120_000);

let f: ProjectFixture;
beforeAll(async () => {
  f = await setupProject({ name: 'offer standing' });
});

async function release(fields: Record<string, string> = {}) {
  const response = await api('POST', `/api/v1/projects/${f.project.id}/release/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(256), fields) });
  expect(response.status).toBe(201);
  return response.body as { deployment_id: string; build_number: number; artifact_id: string };
}

const check = (deviceId: string) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });
const ask = (deviceId: string, deploymentId: string) =>
  api('POST', '/api/v1/ota/offer/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: deploymentId } });
const transition = (deploymentId: string, action: string) =>
  api('POST', `/api/v1/projects/${f.project.id}/deployments/${deploymentId}/transition/`, { token: f.user.token, json: { action } });
const report = (deviceId: string, deploymentId: string, event: string, reason?: string) =>
  api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: deploymentId, event, ...(reason ? { reason } : {}) } });

async function deviceUuid(deviceId: string): Promise<string> {
  const devices = await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token });
  return (devices.body as Array<{ id: string; device_id: string }>).find((device) => device.device_id === deviceId)!.id;
}

/** Asks until the answer's `status` is `status` (the views follow a transition over NATS within milliseconds). */
const askUntil = (deviceId: string, deploymentId: string, status: string | undefined) =>
  eventually(
    () => ask(deviceId, deploymentId),
    (answer) => answer.status === 200 && answer.body.status === status,
  );

test('a pause holds, a resume stands again, a cancel and an archive withdraw', async () => {
  const released = await release();
  expect((await check('os-1')).body).toMatchObject({ update_available: true, deployment_id: released.deployment_id });
  expect((await report('os-1', released.deployment_id, 'download_started')).status).toBe(200);

  expect((await ask('os-1', released.deployment_id)).body).toEqual({ standing: true });

  expect((await transition(released.deployment_id, 'pause')).status).toBe(200);
  const paused = await askUntil('os-1', released.deployment_id, 'deployment_paused');
  expect(paused.body).toMatchObject({ standing: false, status: 'deployment_paused', hold: true });
  expect(paused.body.message).toEqual(expect.any(String));

  expect((await transition(released.deployment_id, 'resume')).status).toBe(200);
  expect((await askUntil('os-1', released.deployment_id, undefined)).body).toEqual({ standing: true });

  expect((await transition(released.deployment_id, 'cancel')).status).toBe(200);
  expect((await askUntil('os-1', released.deployment_id, 'deployment_cancelled')).body).toMatchObject({ standing: false, hold: false });

  const archived = await api('PATCH', `/api/v1/projects/${f.project.id}/artifacts/${released.artifact_id}/`, { token: f.user.token, json: { archived: true } });
  expect(archived.status).toBe(200);
  expect((await askUntil('os-1', released.deployment_id, 'build_archived')).body).toMatchObject({ standing: false, hold: false });
});

test('a device deactivated, moved out of the target, unknown, or asking of a deployment that does not exist', async () => {
  const released = await release();
  for (const deviceId of ['os-off', 'os-known']) expect((await check(deviceId)).body.update_available).toBe(true);

  expect((await api('PATCH', `/api/v1/projects/${f.project.id}/devices/${await deviceUuid('os-off')}/`, { token: f.user.token, json: { active: false } })).status).toBe(200);
  expect((await ask('os-off', released.deployment_id)).body).toMatchObject({ standing: false, status: 'device_inactive', hold: false });

  expect((await ask('os-never-seen', released.deployment_id)).body).toMatchObject({ standing: false, status: 'device_unknown' });

  const missing = await ask('os-known', '00000000-0000-4000-8000-000000000000');
  expect(missing.status).toBe(404);
  expect(missing.body.detail).toMatch(/deployment/);

  const malformed = await api('POST', '/api/v1/ota/offer/', { token: f.deviceScopeToken, json: { device_id: 'os-known' } });
  expect(malformed.status).toBe(400);
  expect(malformed.body.detail).toEqual(expect.any(String));

  // A deployment to a group the device is not in.
  const group = await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'elsewhere' } });
  expect(group.status).toBe(201);
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, {
    token: f.user.token,
    json: { artifact_id: released.artifact_id, target_group_ids: [group.body.id], rollout_percentage: 100 },
  });
  expect(created.status).toBe(201);
  expect((await transition(created.body.id, 'start')).status).toBe(200);
  expect((await askUntil('os-known', created.body.id, 'not_targeted')).body).toMatchObject({ standing: false, hold: false });
});

test('a stopped report is a line of the timeline, once per reason: no status moves, nothing counts as a failure', async () => {
  const released = await release();
  expect((await check('os-stop')).body.update_available).toBe(true);
  expect((await report('os-stop', released.deployment_id, 'download_started')).status).toBe(200);

  const answers = await Promise.all(Array.from({ length: 5 }, () => report('os-stop', released.deployment_id, 'stopped', 'deployment_paused')));
  for (const answer of answers) expect(answer.body).toEqual({ accepted: true, final_status: 'download_started' });

  const badReason = await report('os-stop', released.deployment_id, 'stopped', 'checksum_mismatch');
  expect(badReason.status).toBe(400);
  expect(badReason.body.detail).toMatch(/deployment_paused/);

  const uuid = await deviceUuid('os-stop');
  const timeline = await api('GET', `/api/v1/projects/${f.project.id}/devices/${uuid}/events/`, { token: f.user.token });
  expect(timeline.status).toBe(200);
  const stops = (timeline.body as Array<{ event: string; reason: string; status: string }>).filter((line) => line.event === 'stopped');
  expect(stops).toEqual([expect.objectContaining({ event: 'stopped', reason: 'deployment_paused', status: 'download_started' })]);

  const summary = await eventually(
    () => api('GET', `/api/v1/projects/${f.project.id}/deployments/${released.deployment_id}/summary/`, { token: f.user.token }),
    (answer) => answer.body.devices_by_status?.download_started === 1,
  );
  expect(summary.body).toMatchObject({ failure_count: 0 });
  expect(summary.body.devices_by_status).toMatchObject({ download_started: 1, failed: 0 });
});

describe('the download URL is bound to its offer', () => {
  const fetchUrl = (url: string, method: 'GET' | 'HEAD' = 'GET') => fetch(url, { method, headers: { range: 'bytes=0-9' } });
  const detailOf = async (response: Response) => ((await response.json()) as { detail: string }).detail;

  test('refused 409 while its deployment is paused, 410 once cancelled; HEAD answers the same', async () => {
    const released = await release();
    const offer = await check('os-url');
    const url = offer.body.url as string;
    expect(new URL(url).searchParams.get('deployment')).toBe(released.deployment_id);
    expect((await fetchUrl(url)).status).toBe(206);

    expect((await transition(released.deployment_id, 'pause')).status).toBe(200);
    const paused = await eventually(() => fetchUrl(url), (response) => response.status !== 206);
    expect(paused.status).toBe(409);
    expect(await detailOf(paused)).toMatch(/deployment_paused/);
    expect((await fetchUrl(url, 'HEAD')).status).toBe(409);

    expect((await transition(released.deployment_id, 'resume')).status).toBe(200);
    expect((await eventually(() => fetchUrl(url), (response) => response.status === 206)).status).toBe(206);

    expect((await transition(released.deployment_id, 'cancel')).status).toBe(200);
    const cancelled = await eventually(() => fetchUrl(url), (response) => response.status !== 206);
    expect(cancelled.status).toBe(410);
    expect(await detailOf(cancelled)).toMatch(/deployment_cancelled/);
    expect((await fetchUrl(url, 'HEAD')).status).toBe(410);
  });

  test('refused once the device is deactivated, or the token that asked for it is revoked', async () => {
    await release();
    const deactivatedUrl = (await check('os-url-off')).body.url as string;
    expect((await fetchUrl(deactivatedUrl)).status).toBe(206);
    expect((await api('PATCH', `/api/v1/projects/${f.project.id}/devices/${await deviceUuid('os-url-off')}/`, { token: f.user.token, json: { active: false } })).status).toBe(200);
    const deactivated = await fetchUrl(deactivatedUrl);
    expect(deactivated.status).toBe(410);
    expect(await detailOf(deactivated)).toMatch(/device_inactive/);

    const token = await api('POST', `/api/v1/projects/${f.project.id}/tokens/`, { token: f.user.token, json: { name: 'to revoke', scope: 'device' } });
    expect(token.status).toBe(201);
    const offered = await api('POST', '/api/v1/ota/check/', { token: token.body.token, json: checkBody('os-url-revoked') });
    const url = offered.body.url as string;
    expect((await fetchUrl(url)).status).toBe(206);
    expect((await api('DELETE', `/api/v1/projects/${f.project.id}/tokens/${token.body.id}/`, { token: f.user.token })).status).toBe(204);
    const revoked = await fetchUrl(url);
    expect(revoked.status).toBe(403);
    expect(await detailOf(revoked)).toMatch(/revoked/);
  });

  test('a URL altered to name another offer is refused', async () => {
    await release();
    const url = new URL((await check('os-url-alter')).body.url as string);
    url.searchParams.set('device', 'os-someone-else');
    expect((await fetchUrl(url.toString())).status).toBe(403);
    url.searchParams.set('device', 'os-url-alter');
    url.searchParams.delete('deployment');
    expect((await fetchUrl(url.toString())).status).toBe(403);
  });
});
