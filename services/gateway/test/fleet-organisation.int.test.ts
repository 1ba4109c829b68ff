import { MANIFEST, api, checkBody, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// Organising a large fleet through the API (docs/api.md, "Groups and channels" and "Before a deployment"): devices listed a page at
// a time with a total, searched, counted per chip family; groups and channels renamed and deleted
// under their rules; members added and removed in bulk; the reach of a set of targets before a
// deployment exists; and an audit trail that can be filtered and says who acted.

const checkIn = (f: ProjectFixture, deviceId: string, chipFamily = 'esp32') =>
  api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId, { chip_family: chipFamily }) });

async function fleetOf(f: ProjectFixture, size: number, chipFamily = 'esp32'): Promise<Array<{ id: string; device_id: string }>> {
  for (let i = 1; i <= size; i += 1) expect((await checkIn(f, `unit-${String(i).padStart(3, '0')}`, chipFamily)).status).toBe(200);
  return (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body;
}

test('devices come a page at a time in the order of their ids, with the total of every match, and can be searched', async () => {
  const f = await setupProject();
  await fleetOf(f, 25);
  for (const deviceId of ['Gate-A', 'gate-b']) await checkIn(f, deviceId, 'esp32s3');
  const base = `/api/v1/projects/${f.project.id}/devices/`;
  const seen: string[] = [];
  let afterId = '';
  for (let page = 0; page < 5; page += 1) {
    const answer = await api('GET', `${base}?limit=10${afterId ? `&after_id=${afterId}` : ''}`, { token: f.user.token });
    expect(answer.status).toBe(200);
    // A small project is counted exactly.
    expect(answer.headers.get('x-total-count')).toBe('27');
    expect(answer.headers.get('x-total-count-estimate')).toBeNull();
    seen.push(...answer.body.map((device: { id: string }) => device.id));
    afterId = answer.headers.get('x-next-after-id') ?? '';
    // The last page says so by having no next.
    expect([page, Boolean(afterId)]).toEqual([page, seen.length < 27]);
    if (!afterId) break;
  }
  expect(seen).toHaveLength(27);
  expect(seen).toEqual([...seen].sort());
  expect(new Set(seen).size).toBe(27);
  // `after` names the device by its device_id: the same page as after its id.
  const tenth = (await api('GET', `${base}?ids=${seen[9]}`, { token: f.user.token })).body[0];
  const byDeviceId = await api('GET', `${base}?limit=5&after=${encodeURIComponent(tenth.device_id)}`, { token: f.user.token });
  expect(byDeviceId.body.map((device: { id: string }) => device.id)).toEqual(seen.slice(10, 15));
  expect((await api('GET', `${base}?limit=5&after=${tenth.device_id}&after_id=${seen[9]}`, { token: f.user.token })).status).toBe(422);
  expect((await api('GET', `${base}?after_id=${seen[9]}`, { token: f.user.token })).status).toBe(422);

  const found = await api('GET', `${base}?q=GATE&limit=50`, { token: f.user.token });
  expect(found.body.map((device: { device_id: string }) => device.device_id).sort()).toEqual(['Gate-A', 'gate-b']);
  expect(found.headers.get('x-total-count')).toBe('2');
  // Text that would be a pattern is matched as it is.
  expect((await api('GET', `${base}?q=.*`, { token: f.user.token })).body).toEqual([]);
  expect((await api('GET', `${base}?chip_family=esp32s3`, { token: f.user.token })).body).toHaveLength(2);
  // Without a limit the whole list comes, as before, and without the header.
  const whole = await api('GET', base, { token: f.user.token });
  expect(whole.body).toHaveLength(27);
  expect(whole.headers.get('x-total-count')).toBeNull();
  expect((await api('GET', `${base}?after=unit-001`, { token: f.user.token })).status).toBe(422);

  // Named devices, by id: what a page of rollout states needs to show device ids.
  const [first, second] = whole.body as Array<{ id: string; device_id: string }>;
  const named = await api('GET', `${base}?ids=${first!.id},${second!.id}`, { token: f.user.token });
  expect(named.body.map((device: { device_id: string }) => device.device_id)).toEqual([first!.device_id, second!.device_id]);

  const families = await api('GET', `/api/v1/projects/${f.project.id}/chip-families/`, { token: f.user.token });
  expect(families.body).toEqual([
    { chip_family: 'esp32', devices: 25, estimated: false },
    { chip_family: 'esp32s3', devices: 2, estimated: false },
  ]);
});

test('bulk membership, member and device counts, and the reach of targets before a deployment', async () => {
  const f = await setupProject();
  const devices = await fleetOf(f, 12);
  const group = (await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'canary' } })).body;
  const changes = `/api/v1/projects/${f.project.id}/groups/${group.id}/members/changes/`;
  const stranger = '00000000-0000-4000-8000-000000000000';
  // A device of another project is no device of this one.
  const [foreign] = await fleetOf(await setupProject(), 1);
  const added = await api('POST', changes, { token: f.user.token, json: { add: [...devices.slice(0, 8).map((device) => device.id), stranger, foreign!.id] } });
  expect(added.status).toBe(200);
  expect(added.body).toEqual({ added: 8, removed: 0, missing_device_ids: [stranger, foreign!.id] });
  const removed = await api('POST', changes, { token: f.user.token, json: { remove: devices.slice(0, 3).map((device) => device.id) } });
  expect(removed.body).toMatchObject({ added: 0, removed: 3 });
  // A repeat changes nothing and counts nothing: only memberships that changed are counted.
  const repeated = await api('POST', changes, { token: f.user.token, json: { add: devices.slice(3, 8).map((device) => device.id), remove: devices.slice(0, 3).map((device) => device.id) } });
  expect(repeated.body).toEqual({ added: 0, removed: 0, missing_device_ids: [] });
  const groups = (await api('GET', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token })).body;
  expect(groups).toEqual([expect.objectContaining({ name: 'canary', member_count: 5 })]);
  const channels = (await api('GET', `/api/v1/projects/${f.project.id}/channels/`, { token: f.user.token })).body;
  expect(channels).toEqual([expect.objectContaining({ name: 'stable', device_count: 12 })]);
  // What a change would do to a rollout that targets the group, before anything changes.
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const draft = (await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, target_group_ids: [group.id] } })).body;
  expect((await api('POST', `/api/v1/projects/${f.project.id}/deployments/${draft.id}/transition/`, { token: f.user.token, json: { action: 'start' } })).status).toBe(200);
  const impact = await api('POST', `${changes}impact/`, { token: f.user.token, json: { add: devices.slice(0, 10).map((device) => device.id), remove: devices.slice(3, 4).map((device) => device.id) } });
  expect(impact.status).toBe(200);
  // Members now: 3..7. Adding 0..9 gives 0, 1, 2, 8 and 9; 3, added and removed in one change, ends outside (the change adds, then removes).
  expect(impact.body).toEqual({ group: { id: group.id, name: 'canary' }, deployments: [expect.objectContaining({ id: draft.id, state: 'active', gains: 5, loses: 1 })] });
  expect((await api('GET', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token })).body[0].member_count).toBe(5);
  const tooMany = await api('POST', changes, { token: f.user.token, json: { add: Array.from({ length: 1001 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`) } });
  expect(tooMany.status).toBe(422);

  const reach = (query: string) => api('GET', `/api/v1/projects/${f.project.id}/reach/${query}`, { token: f.user.token });
  expect((await reach('')).body).toEqual({ devices: 12, estimated: false });
  expect((await reach(`?group_ids=${group.id}`)).body).toEqual({ devices: 5, estimated: false });
  expect((await reach(`?group_ids=${group.id}&channel_ids=${f.defaultChannelId}`)).body).toEqual({ devices: 5, estimated: false });
  expect((await reach('?group_ids=not-a-list')).status).toBe(422);
});

test('groups and channels are renamed and deleted under their rules, each change audited with who made it', async () => {
  const f = await setupProject();
  const devices = await fleetOf(f, 3);
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const group = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'pilot' } })).body;
  await api('POST', `${projectPath}/groups/${group.id}/members/`, { token: f.user.token, json: { device_id: devices[0]!.id } });
  const other = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'other' } })).body;
  const beta = (await api('POST', `${projectPath}/channels/`, { token: f.user.token, json: { name: 'beta' } })).body;

  const renamed = await api('PATCH', `${projectPath}/groups/${group.id}/`, { token: f.user.token, json: { name: 'canary' } });
  expect(renamed.status).toBe(200);
  expect(renamed.body).toMatchObject({ id: group.id, name: 'canary', member_count: 1 });
  expect((await api('PATCH', `${projectPath}/groups/${other.id}/`, { token: f.user.token, json: { name: 'canary' } })).status).toBe(409);
  expect((await api('PATCH', `${projectPath}/channels/${beta.id}/`, { token: f.user.token, json: { name: 'stable' } })).status).toBe(409);
  expect((await api('PATCH', `${projectPath}/channels/${beta.id}/`, { token: f.user.token, json: { name: 'bad name' } })).status).toBe(422);

  // A group targeted by a draft is kept; once the draft is cancelled it can go, and its device stays.
  const artifact = (await api('POST', `${projectPath}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const draft = (await api('POST', `${projectPath}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, target_group_ids: [group.id], target_channel_ids: [beta.id] } })).body;
  const refused = await api('DELETE', `${projectPath}/groups/${group.id}/`, { token: f.user.token });
  expect(refused.status).toBe(409);
  expect(refused.body.detail).toMatch(/group "canary" is targeted by a deployment .*build 1 \(draft\)/);
  expect((await api('DELETE', `${projectPath}/channels/${beta.id}/`, { token: f.user.token })).status).toBe(409);
  await api('POST', `${projectPath}/deployments/${draft.id}/transition/`, { token: f.user.token, json: { action: 'cancel' } });
  expect((await api('DELETE', `${projectPath}/groups/${group.id}/`, { token: f.user.token })).status).toBe(204);
  expect((await api('GET', `${projectPath}/devices/${devices[0]!.id}/`, { token: f.user.token })).body.group_ids).toEqual([]);
  expect((await api('GET', `${projectPath}/groups/${group.id}/members/`, { token: f.user.token })).status).toBe(404);

  // The default channel, and a channel with devices, stay.
  const stable = await api('DELETE', `${projectPath}/channels/${f.defaultChannelId}/`, { token: f.user.token });
  expect(stable.status).toBe(409);
  expect(stable.body.detail).toMatch(/default channel/);
  await api('PATCH', `${projectPath}/devices/${devices[1]!.id}/`, { token: f.user.token, json: { channel_id: beta.id } });
  const occupied = await api('DELETE', `${projectPath}/channels/${beta.id}/`, { token: f.user.token });
  expect(occupied.status).toBe(409);
  expect(occupied.body.detail).toMatch(/1 device is on channel "beta"/);
  await api('PATCH', `${projectPath}/devices/${devices[1]!.id}/`, { token: f.user.token, json: { channel_id: f.defaultChannelId } });
  expect((await api('DELETE', `${projectPath}/channels/${beta.id}/`, { token: f.user.token })).status).toBe(204);

  // The audit trail, filtered to one resource or one action, names the person.
  const groupEvents = (await api('GET', `${projectPath}/audit/?action=group`, { token: f.user.token })).body as Array<Record<string, unknown>>;
  // Events recorded within one millisecond may come in either order: the newest two are apart.
  expect(groupEvents.map((event) => event.action).slice(0, 2)).toEqual(['group.deleted', 'group.renamed']);
  expect(groupEvents.map((event) => event.action).sort()).toEqual(['group.created', 'group.created', 'group.deleted', 'group.member_added', 'group.renamed']);
  expect(groupEvents[0]).toMatchObject({ actor_type: 'user', actor_email: f.user.email, details: { name: 'canary', members: 1 } });
  const deletions = (await api('GET', `${projectPath}/audit/?action=channel.deleted`, { token: f.user.token })).body;
  expect(deletions).toEqual([expect.objectContaining({ action: 'channel.deleted', target_id: beta.id })]);
  const byToken = await api('POST', `${projectPath}/groups/`, { token: f.apiToken, json: { name: 'ci-made' } });
  expect(byToken.status).toBe(201);
  const [tokenEvent] = (await api('GET', `${projectPath}/audit/?action=group.created&limit=1`, { token: f.user.token })).body;
  expect(tokenEvent).toMatchObject({ actor_type: 'project_token', actor_email: null });
  expect((await api('GET', `${projectPath}/audit/?action=Group`, { token: f.user.token })).status).toBe(422);
});

test('a bulk change of 1000 devices is one request that answers with exact counts, audited once', async () => {
  const f = await setupProject({ maxDevices: 2000 });
  const deviceIds = Array.from({ length: 1000 }, (_, i) => `bulk-${String(i).padStart(4, '0')}`);
  for (let start = 0; start < deviceIds.length; start += 50) {
    const answers = await Promise.all(deviceIds.slice(start, start + 50).map((deviceId) => checkIn(f, deviceId)));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  }
  const devices = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?limit=1000`, { token: f.user.token })).body as Array<{ id: string }>;
  expect(devices).toHaveLength(1000);
  const group = (await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'everyone' } })).body;
  const changes = `/api/v1/projects/${f.project.id}/groups/${group.id}/members/changes/`;
  expect((await api('POST', changes, { token: f.user.token, json: { add: devices.slice(0, 100).map((device) => device.id) } })).body.added).toBe(100);
  // Within the gateway's request deadline (a change of 522 devices used to answer 503 and go on in the background).
  const startedAt = Date.now();
  const all = await api('POST', changes, { token: f.user.token, json: { add: devices.map((device) => device.id) } });
  process.stdout.write(`[bulk] 1000 devices in ${Date.now() - startedAt} ms\n`);
  expect(all.status).toBe(200);
  expect(all.body).toEqual({ added: 900, removed: 0, missing_device_ids: [] });
  const listed = await api('GET', `/api/v1/projects/${f.project.id}/devices/?group_id=${group.id}&limit=1000`, { token: f.user.token });
  expect(listed.headers.get('x-total-count')).toBe('1000');
  const audit = (await api('GET', `/api/v1/projects/${f.project.id}/audit/?action=group`, { token: f.user.token })).body as Array<{ action: string; details: { added: number } }>;
  expect(audit.filter((event) => event.action === 'group.members_changed').map((event) => event.details.added)).toEqual([900, 100]);
}, 180_000);
