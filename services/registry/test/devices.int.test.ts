import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

let f: ProjectFixture;
const path = (suffix = '') => `/api/v1/projects/${f.project.id}${suffix}`;

beforeAll(async () => {
  f = await setupProject({ name: 'devices' });
});

describe('pre-provisioning', () => {
  it('creates the device on the default channel and answers its token, which works on the device API', async () => {
    const created = await api('POST', path('/devices/'), {
      token: f.user.token,
      json: { device_id: 'pre-1', framework: 'esp_idf', chip_family: 'esp32', metadata: { site: 'north' } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ device_id: 'pre-1', channel_id: f.defaultChannelId, active: true, check_state: 'never_seen', metadata: { site: 'north' } });
    expect(created.body.token).toMatch(/^ota_dev_/);

    const check = await api('POST', '/api/v1/ota/check/', { token: created.body.token, json: { framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 } });
    expect(check.body).toMatchObject({ update_available: false, status: 'no_active_deployment' });
  });

  it('refuses a duplicate device_id with 409 and unknown keys with 422', async () => {
    await api('POST', path('/devices/'), { token: f.user.token, json: { device_id: 'pre-dup' } });
    expect((await api('POST', path('/devices/'), { token: f.user.token, json: { device_id: 'pre-dup' } })).status).toBe(409);
    expect((await api('POST', path('/devices/'), { token: f.user.token, json: { device_id: 'x', cohort: 3 } })).status).toBe(422);
  });

  it('never lets concurrent pre-provisioning overshoot the device cap', async () => {
    const capped = await setupProject({ maxDevices: 5 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api('POST', `/api/v1/projects/${capped.project.id}/devices/`, { token: capped.user.token, json: { device_id: `cap-${i}` } }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 400)).toHaveLength(7);
    const listed = await api('GET', `/api/v1/projects/${capped.project.id}/devices/`, { token: capped.user.token });
    expect(listed.body).toHaveLength(5);
  });
});

describe('device tokens', () => {
  it('rotate (the old one stops at once) and revoke', async () => {
    const created = await api('POST', path('/devices/'), { token: f.user.token, json: { device_id: 'tok-1' } });
    const body = { framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 };
    const rotated = await api('POST', path(`/devices/${created.body.id}/token/`), { token: f.user.token });
    expect(rotated.status).toBe(201);
    expect(rotated.body.prefix).toBe(rotated.body.token.slice(0, 12));
    expect((await api('POST', '/api/v1/ota/check/', { token: created.body.token, json: body })).status).toBe(401);
    expect((await api('POST', '/api/v1/ota/check/', { token: rotated.body.token, json: body })).status).toBe(200);
    // A device token speaks for its own device only.
    expect((await api('POST', '/api/v1/ota/check/', { token: rotated.body.token, json: { ...body, device_id: 'someone-else' } })).status).toBe(403);

    expect((await api('DELETE', path(`/devices/${created.body.id}/token/`), { token: f.user.token })).status).toBe(204);
    expect((await api('POST', '/api/v1/ota/check/', { token: rotated.body.token, json: body })).status).toBe(401);
  });
});

describe('the device list', () => {
  let groupA: string;
  let groupB: string;
  let beta: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    // Names chosen so that name order and creation order differ.
    groupB = (await api('POST', path('/groups/'), { token: f.user.token, json: { name: 'zeta' } })).body.id;
    groupA = (await api('POST', path('/groups/'), { token: f.user.token, json: { name: 'alpha' } })).body.id;
    beta = (await api('POST', path('/channels/'), { token: f.user.token, json: { name: 'beta' } })).body.id;
    ids = {};
    for (const [deviceId, channel, active] of [
      ['list-1', undefined, true],
      ['list-2', beta, true],
      ['list-3', beta, false],
    ] as const) {
      const created = await api('POST', path('/devices/'), {
        token: f.user.token,
        json: { device_id: deviceId, active, ...(channel ? { channel_id: channel } : {}) },
      });
      ids[deviceId] = created.body.id;
    }
    await api('POST', path(`/groups/${groupB}/members/`), { token: f.user.token, json: { device_id: ids['list-1'] } });
    await api('POST', path(`/groups/${groupA}/members/`), { token: f.user.token, json: { device_id: ids['list-1'] } });
    await api('POST', path(`/groups/${groupA}/members/`), { token: f.user.token, json: { device_id: ids['list-2'] } });
  });

  const listed = async (query: string) =>
    (await api('GET', path(`/devices/${query}`), { token: f.user.token })).body
      .map((device: { device_id: string }) => device.device_id)
      .filter((id: string) => id.startsWith('list-'))
      .sort();

  it('orders group_ids by group name', async () => {
    const device = await api('GET', path(`/devices/${ids['list-1']}/`), { token: f.user.token });
    expect(device.body.group_ids).toEqual([groupA, groupB]);
  });

  it('filters by active, group and channel, and by both together', async () => {
    expect(await listed('?active=false')).toEqual(['list-3']);
    expect(await listed(`?group_id=${groupA}`)).toEqual(['list-1', 'list-2']);
    expect(await listed(`?channel_id=${beta}`)).toEqual(['list-2', 'list-3']);
    expect(await listed(`?group_id=${groupA}&channel_id=${beta}`)).toEqual(['list-2']);
  });

  it('gives an empty list for unknown or other projects’ ids, and 422 for ids that are not UUIDs', async () => {
    const other = await setupProject();
    expect(await listed(`?channel_id=${other.defaultChannelId}`)).toEqual([]);
    expect(await listed('?group_id=00000000-0000-4000-8000-000000000000')).toEqual([]);
    expect((await api('GET', path('/devices/?group_id=nope'), { token: f.user.token })).status).toBe(422);
    expect((await api('GET', path('/devices/?active=maybe'), { token: f.user.token })).status).toBe(422);
  });

  it('lists group members, and adding a member twice is not an error', async () => {
    expect((await api('POST', path(`/groups/${groupA}/members/`), { token: f.user.token, json: { device_id: ids['list-2'] } })).status).toBe(201);
    const members = await api('GET', path(`/groups/${groupA}/members/`), { token: f.user.token });
    expect(members.body.map((device: { device_id: string }) => device.device_id).sort()).toEqual(['list-1', 'list-2']);
    expect((await api('DELETE', path(`/groups/${groupA}/members/${ids['list-2']}/`), { token: f.user.token })).status).toBe(204);
    const after = await api('GET', path(`/groups/${groupA}/members/`), { token: f.user.token });
    expect(after.body.map((device: { device_id: string }) => device.device_id)).toEqual(['list-1']);
  });
});

describe('groups and channels', () => {
  it('refuse duplicate names with 409', async () => {
    await api('POST', path('/groups/'), { token: f.user.token, json: { name: 'dup' } });
    expect((await api('POST', path('/groups/'), { token: f.user.token, json: { name: 'dup' } })).status).toBe(409);
    expect((await api('POST', path('/channels/'), { token: f.user.token, json: { name: 'stable' } })).status).toBe(409);
  });
});

describe('updating and deleting devices', () => {
  it('deactivates a device, which then answers device_inactive', async () => {
    await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('patch-1') });
    const devices = await api('GET', path('/devices/'), { token: f.user.token });
    const id = devices.body.find((device: { device_id: string }) => device.device_id === 'patch-1').id;
    const patched = await api('PATCH', path(`/devices/${id}/`), { token: f.user.token, json: { active: false, metadata: { note: 'rma' } } });
    expect(patched.body).toMatchObject({ active: false, metadata: { note: 'rma' } });
    const check = await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('patch-1') });
    expect(check.body).toMatchObject({ update_available: false, status: 'device_inactive' });
    expect((await api('PATCH', path(`/devices/${id}/`), { token: f.user.token, json: { channel_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(400);
  });

  it('moves a device to another channel, where a deployment reaches it', async () => {
    const canary = (await api('POST', path('/channels/'), { token: f.user.token, json: { name: 'canary' } })).body.id;
    await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('mover') });
    const id = (await api('GET', path('/devices/'), { token: f.user.token })).body.find((d: { device_id: string }) => d.device_id === 'mover').id;
    await api('POST', path('/release/'), { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(32), { channel_name: 'canary' }) });
    expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('mover') })).body.status).toBe('no_active_deployment');
    expect((await api('PATCH', path(`/devices/${id}/`), { token: f.user.token, json: { channel_id: canary } })).body.channel_id).toBe(canary);
    expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('mover') })).body.update_available).toBe(true);
  });

  it('deletes a device with its history and token', async () => {
    const created = await api('POST', path('/devices/'), { token: f.user.token, json: { device_id: 'gone', framework: 'esp_idf', chip_family: 'esp32' } });
    await api('POST', '/api/v1/ota/check/', { token: created.body.token, json: { framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 } });
    const events = await eventually(
      () => api('GET', path(`/devices/${created.body.id}/check-events/`), { token: f.user.token }),
      (response) => response.body.length === 1,
    );
    expect(events.body).toHaveLength(1);
    expect((await api('DELETE', path(`/devices/${created.body.id}/`), { token: f.user.token })).status).toBe(204);
    expect((await api('GET', path(`/devices/${created.body.id}/`), { token: f.user.token })).status).toBe(404);
    expect((await api('GET', path(`/devices/${created.body.id}/check-events/`), { token: f.user.token })).status).toBe(404);
    expect((await api('POST', '/api/v1/ota/check/', { token: created.body.token, json: { framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 } })).status).toBe(401);
    // The same device_id can be provisioned again, with no history.
    const again = await api('POST', path('/devices/'), { token: f.user.token, json: { device_id: 'gone' } });
    expect(again.status).toBe(201);
    expect((await api('GET', path(`/devices/${again.body.id}/check-events/`), { token: f.user.token })).body).toEqual([]);
  });
});

describe('check_state', () => {
  it('is never_seen, then waiting_for_next_check when a deployment starts, then no_pending_check after a check', async () => {
    const g = await setupProject();
    const created = await api('POST', `/api/v1/projects/${g.project.id}/devices/`, { token: g.user.token, json: { device_id: 'cs', framework: 'esp_idf', chip_family: 'esp32' } });
    expect(created.body.check_state).toBe('never_seen');
    await api('POST', '/api/v1/ota/check/', { token: created.body.token, json: { framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 } });
    const detail = () => api('GET', `/api/v1/projects/${g.project.id}/devices/${created.body.id}/`, { token: g.user.token });
    expect((await eventually(detail, (r) => r.body.last_check_at !== null)).body.check_state).toBe('no_pending_check');
    await api('POST', `/api/v1/projects/${g.project.id}/release/`, { token: g.user.token, body: uploadForm(MANIFEST, randomBinary(32)) });
    expect((await detail()).body.check_state).toBe('waiting_for_next_check');
    await api('POST', '/api/v1/ota/check/', { token: created.body.token, json: { framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 } });
    expect((await eventually(detail, (r) => r.body.last_check_status === 'offered')).body.check_state).toBe('no_pending_check');
  });
});
