import { api, eventually, randomBinary, setupProject, uploadForm } from '@ota/testkit';

// A device's OTA decision records: registry writes each check's record into the device's history
// slots in the check's one device write, before the answer (docs/architecture.md, "A device
// check, hop by hop"), so a read right after a check sees it.

const check = (token: string, deviceId: string, build = 0) =>
  api('POST', '/api/v1/ota/check/', {
    token,
    json: { device_id: deviceId, framework: 'arduino', chip_family: 'esp32', current_build_number: build, version_label: `v${build}` },
  });

let userToken: string;
let projectId: string;
let deviceToken: string;

beforeAll(async () => {
  const fixture = await setupProject({ name: 'decision records' });
  [userToken, projectId, deviceToken] = [fixture.user.token, fixture.project.id, fixture.deviceScopeToken];
});

async function deviceUuidOf(deviceId: string): Promise<string> {
  const devices = await api('GET', `/api/v1/projects/${projectId}/devices/`, { token: userToken });
  return devices.body.find((device: { device_id: string }) => device.device_id === deviceId).id;
}

describe('OTA decision records', () => {
  it('are recorded for every check, newest first, and the device shows its last outcome', async () => {
    await check(deviceToken, 'd-history');
    const uuid = await deviceUuidOf('d-history');
    await api('POST', `/api/v1/projects/${projectId}/release/`, {
      token: userToken,
      body: uploadForm({ version_label: '2.0.0', framework: 'arduino', chip_family: 'esp32' }, randomBinary(64)),
    });
    // The release's deployment reaches the rollout view synchronously on the replica that wrote it.
    const offered = await check(deviceToken, 'd-history');
    expect(offered.body.update_available).toBe(true);

    const path = `/api/v1/projects/${projectId}/devices/${uuid}/check-events/`;
    const events = await eventually(
      () => api('GET', path, { token: userToken }),
      (response) => response.body.length === 2,
    );
    expect(events.status).toBe(200);
    expect(events.body.map((event: { status: string }) => event.status)).toEqual(['offered', 'no_active_deployment']);
    expect(events.body[0]).toMatchObject({ decision: 'offered', deployment_id: offered.body.deployment_id, artifact_build_number: 1, reported_build_number: 0 });

    const filtered = await api('GET', `${path}?decision=no_update`, { token: userToken });
    expect(filtered.body.map((event: { status: string }) => event.status)).toEqual(['no_active_deployment']);

    const device = await eventually(
      () => api('GET', `/api/v1/projects/${projectId}/devices/${uuid}/`, { token: userToken }),
      (response) => response.body.last_check_status === 'offered',
    );
    expect(device.body).toMatchObject({ last_check_status: 'offered', check_state: 'no_pending_check' });
  });

  it('keep only the newest 20 per device', async () => {
    for (let build = 1; build <= 25; build += 1) await check(deviceToken, 'd-many', build);
    const uuid = await deviceUuidOf('d-many');
    const path = `/api/v1/projects/${projectId}/devices/${uuid}/check-events/`;
    // The 25th record has arrived once the newest record reports build 25.
    const events = await eventually(
      () => api('GET', path, { token: userToken }),
      (response) => response.body[0]?.reported_build_number === 25,
    );
    expect(events.body).toHaveLength(20);
    expect(events.body.map((event: { reported_build_number: number }) => event.reported_build_number)).toEqual(
      Array.from({ length: 20 }, (_, i) => 25 - i),
    );
    const limited = await api('GET', `${path}?limit=3`, { token: userToken });
    expect(limited.body).toHaveLength(3);
    // `since` keeps the records created at or after it: from the 5th newest on, 5 of them.
    const since = await api('GET', `${path}?since=${encodeURIComponent(events.body[4].created_at)}`, { token: userToken });
    expect(since.body.map((event: { id: string }) => event.id)).toEqual(events.body.slice(0, 5).map((event: { id: string }) => event.id));
    const sinceLater = await api('GET', `${path}?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { token: userToken });
    expect(sinceLater.body).toEqual([]);
  });

  it('keep only the newest 20 whatever the query: a filter never reaches a record older than those 20', async () => {
    // The store holds up to 39 records between trims (docs/architecture.md); the contract keeps 20.
    const fresh = await setupProject({ name: 'decision retention' });
    const [user, project, fleet] = [fresh.user.token, fresh.project.id, fresh.deviceScopeToken];
    const release = await api('POST', `/api/v1/projects/${project}/release/`, {
      token: user,
      body: uploadForm({ version_label: '1.0.0', framework: 'arduino', chip_family: 'esp32' }, randomBinary(64)),
    });
    expect(release.status).toBe(201);
    // Five offers (build 0 is older than build 1), then twenty checks already up to date.
    for (let i = 0; i < 5; i += 1) expect((await check(fleet, 'd-retention', 0)).body.update_available).toBe(true);
    for (let i = 0; i < 20; i += 1) expect((await check(fleet, 'd-retention', 1)).body.update_available).toBe(false);
    const devices = await api('GET', `/api/v1/projects/${project}/devices/`, { token: user });
    const uuid = devices.body.find((device: { device_id: string }) => device.device_id === 'd-retention').id;
    const path = `/api/v1/projects/${project}/devices/${uuid}/check-events/`;

    const newest = await api('GET', path, { token: user });
    expect(newest.body.map((event: { status: string }) => event.status)).toEqual(Array(20).fill('up_to_date'));
    for (const query of ['decision=offered', 'status=offered', `since=${encodeURIComponent(new Date(0).toISOString())}&decision=offered`]) {
      const filtered = await api('GET', `${path}?${query}`, { token: user });
      expect({ query, status: filtered.status, events: filtered.body }).toEqual({ query, status: 200, events: [] });
    }
    const noUpdate = await api('GET', `${path}?decision=no_update`, { token: user });
    expect(noUpdate.body.map((event: { id: string }) => event.id)).toEqual(newest.body.map((event: { id: string }) => event.id));
  });

  it('refuses invalid query parameters with a 422 array', async () => {
    const uuid = await deviceUuidOf('d-history');
    const response = await api('GET', `/api/v1/projects/${projectId}/devices/${uuid}/check-events/?limit=0&status=nope`, { token: userToken });
    expect(response.status).toBe(422);
    expect(response.body.detail.map((issue: { loc: string[] }) => issue.loc[1]).sort()).toEqual(['limit', 'status']);
  });
});
