import mongoose from 'mongoose';
import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, testStack, uploadForm, type ProjectFixture } from '@ota/testkit';

// Bulk group changes (docs/api.md, "Bulk group changes"): every device that matches a selection
// added to a group or taken out of it, as one operation registry runs and reports on, audited once;
// the group's memberships and what the API says of them agree however single changes race it;
// and a change a registry replica left is finished by a sweep.

const registryDatabase = () => String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'registry');

interface Change {
  id: string;
  state: string;
  share_done: number;
  devices_expected: number;
  devices_matched: number;
  added: number;
  removed: number;
  finished_at: string | null;
  detail: string;
}

/**
 * Registers `size` devices, 50 at once. The fleets' projects have no device cap: this test is about
 * bulk changes, and a capped registration near its cap reads every place its owner holds (takePlace,
 * libs/mongo/src/unique-insert.ts); before capped takers tried places by insert, a batch of 50 near
 * 1,200 devices under a cap of 2,000 went past the gateway's 5 s deadline on CI (503).
 */
async function fleetOf(f: ProjectFixture, size: number, chipFamilyOf: (index: number) => string): Promise<void> {
  for (let start = 0; start < size; start += 50) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(50, size - start) }, (_, offset) => {
        const index = start + offset;
        return api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(`bulk-${String(index).padStart(4, '0')}`, { chip_family: chipFamilyOf(index) }) });
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  }
}

/** Asks until the personal token's rate limit lets the request through: parallel clients of one token may run into it. */
async function pastTheRateLimit(ask: () => ReturnType<typeof api>): ReturnType<typeof api> {
  for (;;) {
    const answer = await ask();
    if (answer.status !== 429) return answer;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Polls the change until it ends, keeping every state it was seen in. */
async function followed(f: ProjectFixture, location: string): Promise<Change[]> {
  const seen: Change[] = [];
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const answer = await api('GET', location, { token: f.user.token });
    // Parallel clients of the same token may run into its rate limit.
    if (answer.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    expect(answer.status).toBe(200);
    seen.push(answer.body);
    if (answer.body.state !== 'running') return seen;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the change at ${location} did not end in a minute: ${JSON.stringify(seen.at(-1))}`);
}

/**
 * The group's memberships, read from registry's store, and its members as the API answers them:
 * the devices listed by the group, and those whose `group_ids` hold it.
 */
async function membersStoredAndServed(f: ProjectFixture, groupId: string): Promise<{ members: string[]; listed: string[]; tagged: string[] }> {
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  let members: string[];
  try {
    members = (await connection.getClient().db(registryDatabase()).collection<{ device_id: string }>('memberships').find({ group_id: groupId }).toArray()).map((doc) => doc.device_id).sort();
  } finally {
    await connection.close();
  }
  const devices = async (query: string) => (await pastTheRateLimit(() => api('GET', `/api/v1/projects/${f.project.id}/devices/${query}`, { token: f.user.token }))).body as Array<{ id: string; group_ids: string[] }>;
  const listed = (await devices(`?group_id=${groupId}`)).map((device) => device.id).sort();
  const tagged = (await devices('')).filter((device) => device.group_ids.includes(groupId)).map((device) => device.id).sort();
  return { members, listed, tagged };
}

test('every device matching a selection is added, then removed, as one operation with progress, audited once each', async () => {
  const f = await setupProject({ name: 'bulk-changes', maxDevices: 0 });
  await fleetOf(f, 1200, (index) => (index % 3 === 0 ? 'esp32s3' : 'esp32'));
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const group = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'the-s3s' } })).body;
  const bulk = `${projectPath}/groups/${group.id}/members/bulk-changes/`;

  const started = await api('POST', bulk, { token: f.user.token, json: { action: 'add', matching: { chip_family: 'esp32s3' } } });
  expect(started.status).toBe(202);
  expect(started.body).toMatchObject({ group_id: group.id, action: 'add', matching: { chip_family: 'esp32s3' }, state: 'running', devices_expected: 400, detail: '', finished_at: null });
  const location = started.headers.get('location')!;
  expect(location).toBe(`${bulk}${started.body.id}/`);
  const seen = await followed(f, location);
  const done = seen.at(-1)!;
  expect(done).toMatchObject({ state: 'done', share_done: 1, devices_matched: 400, added: 400, removed: 0, detail: '' });
  expect(done.finished_at).not.toBeNull();
  // Progress only grows.
  const shares = seen.map((change) => change.share_done);
  expect(shares).toEqual([...shares].sort((a, b) => a - b));

  const members = await api('GET', `${projectPath}/devices/?group_id=${group.id}&limit=1000`, { token: f.user.token });
  expect(members.headers.get('x-total-count')).toBe('400');
  expect(new Set(members.body.map((device: { chip_family: string }) => device.chip_family))).toEqual(new Set(['esp32s3']));
  const truth = await membersStoredAndServed(f, group.id);
  expect(truth.members).toHaveLength(400);
  expect([truth.listed, truth.tagged]).toEqual([truth.members, truth.members]);

  // Asked again, it finds every device a member already.
  const again = await api('POST', bulk, { token: f.user.token, json: { action: 'add', matching: { chip_family: 'esp32s3' } } });
  expect((await followed(f, again.headers.get('location')!)).at(-1)).toMatchObject({ state: 'done', devices_matched: 400, added: 0 });

  // Removing takes only the matching members: here the active ones, which all are.
  const removal = await api('POST', bulk, { token: f.user.token, json: { action: 'remove', matching: { active: true } } });
  expect(removal.body.devices_expected).toBe(400);
  expect((await followed(f, removal.headers.get('location')!)).at(-1)).toMatchObject({ state: 'done', devices_matched: 400, added: 0, removed: 400 });
  expect(await membersStoredAndServed(f, group.id)).toEqual({ members: [], listed: [], tagged: [] });

  // One audit event per change, naming who asked, the selection and what changed.
  const events = await eventually(
    async () => (await api('GET', `${projectPath}/audit/?action=group.members_changed`, { token: f.user.token })).body as Array<{ actor_email: string; target_id: string; details: Record<string, unknown> }>,
    (list) => list.length >= 3,
  );
  expect(events.map((event) => [event.details.change_id, event.details.action, event.details.added, event.details.removed]).sort()).toEqual(
    [
      [started.body.id, 'add', 400, 0],
      [again.body.id, 'add', 0, 0],
      [removal.body.id, 'remove', 0, 400],
    ].sort(),
  );
  expect(events[0]).toMatchObject({ actor_email: f.user.email, target_id: group.id, details: { state: 'done', devices_matched: 400 } });
}, 240_000);

test('a selection by groups is their memberships: the members of one group added to another, then the members of both taken out', async () => {
  const f = await setupProject({ name: 'bulk-by-groups', maxDevices: 0 });
  await fleetOf(f, 300, (index) => (index % 3 === 0 ? 'esp32s3' : 'esp32'));
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const groupOf = async (name: string) => (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name } })).body as { id: string };
  const [source, target] = [await groupOf('source'), await groupOf('target')];
  const change = async (groupId: string, json: object) => {
    const started = await api('POST', `${projectPath}/groups/${groupId}/members/bulk-changes/`, { token: f.user.token, json });
    expect(started.status).toBe(202);
    return (await followed(f, started.headers.get('location')!)).at(-1)!;
  };
  expect(await change(source.id, { action: 'add', matching: { chip_family: 'esp32s3' } })).toMatchObject({ state: 'done', added: 100 });
  const sourceMembers = (await membersStoredAndServed(f, source.id)).members;

  // One member still holds a copy of its groups that the releases before kept, and without the
  // source group (as a write that went astray could leave it): the selection follows the membership.
  const astray = sourceMembers[0]!;
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    await connection.getClient().db(registryDatabase()).collection('devices').updateOne({ _id: astray as never }, { $set: { group_ids: [] } });
  } finally {
    await connection.close();
  }
  expect(await change(target.id, { action: 'add', matching: { group_id: source.id } })).toMatchObject({ state: 'done', devices_matched: 100, added: 100 });
  expect(await membersStoredAndServed(f, target.id)).toEqual({ members: sourceMembers, listed: sourceMembers, tagged: sourceMembers });
  expect(await membersStoredAndServed(f, source.id)).toEqual({ members: sourceMembers, listed: sourceMembers, tagged: sourceMembers });

  // Ten leave the source group; then the target's members that are also the source's are taken
  // out of the target: the ten stay.
  const leavers = sourceMembers.slice(0, 10);
  for (const deviceUuid of leavers) expect((await api('DELETE', `${projectPath}/groups/${source.id}/members/${deviceUuid}/`, { token: f.user.token })).status).toBeLessThan(300);
  expect(await change(target.id, { action: 'remove', matching: { group_id: source.id } })).toMatchObject({ state: 'done', devices_matched: 90, removed: 90 });
  expect(await membersStoredAndServed(f, target.id)).toEqual({ members: leavers, listed: leavers, tagged: leavers });
  // And every member of the target, taken out.
  expect(await change(target.id, { action: 'remove', matching: {} })).toMatchObject({ state: 'done', devices_matched: 10, removed: 10 });
  expect(await membersStoredAndServed(f, target.id)).toEqual({ members: [], listed: [], tagged: [] });
}, 240_000);

test('bad bulk changes are refused with a detail, and nothing starts', async () => {
  const f = await setupProject({ name: 'bulk-refusals' });
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const group = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'g' } })).body;
  const bulk = `${projectPath}/groups/${group.id}/members/bulk-changes/`;
  const refused = async (path: string, json: unknown, status: number) => {
    const answer = await api('POST', path, { token: f.user.token, json });
    expect([path, JSON.stringify(json), answer.status]).toEqual([path, JSON.stringify(json), status]);
    expect(answer.body.detail).toBeTruthy();
  };
  await refused(bulk, { action: 'move', matching: {} }, 422);
  await refused(bulk, { action: 'add' }, 422);
  await refused(bulk, { action: 'add', matching: { colour: 'red' } }, 422);
  await refused(bulk, { action: 'add', matching: { group_id: 'not-a-uuid' } }, 422);
  await refused(bulk, { action: 'add', matching: { group_id: '00000000-0000-4000-8000-000000000000' } }, 404);
  await refused(`${projectPath}/groups/00000000-0000-4000-8000-000000000000/members/bulk-changes/`, { action: 'add', matching: {} }, 404);
  // A device-scope token is not accepted by the developer API.
  expect((await api('POST', bulk, { token: f.deviceScopeToken, json: { action: 'add', matching: {} } })).status).toBe(401);
  expect((await api('GET', `${bulk}00000000-0000-4000-8000-000000000000/`, { token: f.user.token })).status).toBe(404);

  // A change is found under its own group only.
  const other = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'other' } })).body;
  const started = await api('POST', bulk, { token: f.user.token, json: { action: 'add', matching: {} } });
  expect(started.status).toBe(202);
  expect((await api('GET', `${projectPath}/groups/${other.id}/members/bulk-changes/${started.body.id}/`, { token: f.user.token })).status).toBe(404);
});

test('memberships and what the API says of them agree when single changes and a second bulk change race a bulk change', async () => {
  const f = await setupProject({ name: 'bulk-races', maxDevices: 0 });
  await fleetOf(f, 600, () => 'esp32');
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const group = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'raced' } })).body;
  const devices = (await api('GET', `${projectPath}/devices/`, { token: f.user.token })).body as Array<{ id: string }>;
  const bulk = `${projectPath}/groups/${group.id}/members/bulk-changes/`;

  // Rounds of a bulk add and a bulk remove started together, while eight parallel clients add and
  // remove single devices of the same group until both have ended.
  for (let round = 0; round < 3; round += 1) {
    // The single clients of the round before drained the token's rate limit: a start may be told to wait.
    const started = await Promise.all(['add', 'remove'].map((action) => pastTheRateLimit(() => api('POST', bulk, { token: f.user.token, json: { action, matching: {} } }))));
    let ended = false;
    const client = async (seed: number) => {
      const statuses: number[] = [];
      for (let step = 0; !ended; step += 1) {
        const device = devices[(seed * 7919 + step * 104_729) % devices.length]!;
        const answer =
          (seed + step) % 2 === 0
            ? await api('POST', `${projectPath}/groups/${group.id}/members/`, { token: f.user.token, json: { device_id: device.id } })
            : await api('DELETE', `${projectPath}/groups/${group.id}/members/${device.id}/`, { token: f.user.token });
        // The personal token's rate limit answers some of them 429: those are waited out.
        if (answer.status === 429) await new Promise((resolve) => setTimeout(resolve, 200));
        else statuses.push(answer.status);
      }
      return statuses;
    };
    const clients = Promise.all(Array.from({ length: 8 }, (_, seed) => client(seed + round * 8)));
    try {
      expect(started.map((answer) => answer.status)).toEqual([202, 202]);
      for (const answer of started) expect((await followed(f, answer.headers.get('location')!)).at(-1)!.state).toBe('done');
    } finally {
      // The clients stop however the round ended, so none is left calling a stack being torn down.
      ended = true;
      await clients.catch(() => []);
    }
    expect((await clients).flat().filter((status) => status >= 300)).toEqual([]);
  }

  // Whatever order the writes landed in, the API says of each device what its memberships say.
  const truth = await membersStoredAndServed(f, group.id);
  expect([truth.listed, truth.tagged]).toEqual([truth.members, truth.members]);
  const listed = await api('GET', `${projectPath}/groups/${group.id}/members/`, { token: f.user.token });
  expect(listed.body.map((device: { id: string }) => device.id).sort()).toEqual(truth.members);
}, 240_000);

test('every read of a group follows its memberships, whatever copy of its groups a device still holds', async () => {
  const f = await setupProject({ name: 'stale-copies', maxDevices: 10 });
  await fleetOf(f, 3, () => 'esp32');
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const group = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'canary' } })).body;
  // fleetOf registers bulk-0000 first, and the listing is in device_id order.
  const [member, ...outsiders] = ((await api('GET', `${projectPath}/devices/`, { token: f.user.token })).body as Array<{ id: string }>).map((device) => device.id);
  expect((await api('POST', `${projectPath}/groups/${group.id}/members/`, { token: f.user.token, json: { device_id: member } })).status).toBe(201);
  // The copies of their groups that the releases before kept on the devices, as a check that
  // rewrote a device over a membership change could leave them on FerretDB v1: the member's
  // without the group, the outsiders' with it (docs/architecture.md, "Group membership").
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    const devices = connection.getClient().db(registryDatabase()).collection<{ _id: string; group_ids: string[] }>('devices');
    await devices.updateOne({ _id: member! }, { $set: { group_ids: [] } });
    for (const outsider of outsiders) await devices.updateOne({ _id: outsider }, { $set: { group_ids: [group.id] } });
  } finally {
    await connection.close();
  }

  const read = async (path: string) => (await api('GET', `${projectPath}${path}`, { token: f.user.token })).body;
  expect((await read(`/devices/?group_id=${group.id}`)).map((device: { id: string }) => device.id)).toEqual([member]);
  expect((await read(`/devices/?group_id=${group.id}&limit=10`)).map((device: { id: string }) => device.id)).toEqual([member]);
  expect((await read(`/devices/${member}/`)).group_ids).toEqual([group.id]);
  expect((await read(`/devices/${outsiders[0]}/`)).group_ids).toEqual([]);
  expect((await read('/devices/')).map((device: { group_ids: string[] }) => device.group_ids)).toEqual([[group.id], [], []]);
  expect((await read('/groups/'))[0]).toMatchObject({ id: group.id, member_count: 1 });
  expect(await read(`/reach/?group_ids=${group.id}`)).toEqual({ devices: 1, estimated: false });

  // A check is offered a deployment to the group on the memberships.
  const artifact = (await api('POST', `${projectPath}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const draft = (await api('POST', `${projectPath}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, target_group_ids: [group.id] } })).body;
  expect((await api('POST', `${projectPath}/deployments/${draft.id}/transition/`, { token: f.user.token, json: { action: 'start' } })).status).toBe(200);
  const check = (index: number) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(`bulk-${String(index).padStart(4, '0')}`, { chip_family: 'esp32' }) });
  const member0 = await eventually(() => check(0), (answer) => answer.body.status === 'offered');
  const outsider1 = await check(1);
  expect([member0.body.status, outsider1.body.status]).toEqual(['offered', 'no_active_deployment']);

  // A bulk removal selected by a field of the devices too takes the member out, and no outsider.
  const started = await api('POST', `${projectPath}/groups/${group.id}/members/bulk-changes/`, { token: f.user.token, json: { action: 'remove', matching: { chip_family: 'esp32' } } });
  expect(started.status).toBe(202);
  expect((await followed(f, started.headers.get('location')!)).at(-1)).toMatchObject({ state: 'done', devices_matched: 1, removed: 1 });
  expect((await read(`/devices/${member}/`)).group_ids).toEqual([]);
});

test('a change whose replica stopped is taken over from where it was and finished', async () => {
  const f = await setupProject({ name: 'bulk-takeover', maxDevices: 0 });
  await fleetOf(f, 300, () => 'esp32');
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const group = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'left-behind' } })).body;
  // A change as a replica that stopped after 8 of its 16 parts leaves it: running, its lease out.
  const id = '5a0c7d4e-1b2f-4c3d-8e9f-0a1b2c3d4e5f';
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    await connection
      .getClient()
      .db(registryDatabase())
      .collection('membership_changes')
      .insertOne({
        _id: id as never,
        project_id: f.project.id,
        group_id: group.id,
        action: 'add',
        matching: {},
        actor: { type: 'user', id: f.project.owner_id, token_prefix: '' },
        state: 'running',
        level: 1,
        buckets_done: 8,
        devices_matched: 0,
        added: 0,
        removed: 0,
        devices_expected: 300,
        created_at: new Date(),
        finished_at: null,
        detail: '',
        audited: false,
        runner: 'a-replica-that-stopped',
        lease_until: new Date(Date.now() - 1000),
      });
  } finally {
    await connection.close();
  }
  const done = (await followed(f, `${projectPath}/groups/${group.id}/members/bulk-changes/${id}/`)).at(-1)!;
  expect(done).toMatchObject({ state: 'done', share_done: 1 });
  // Only the second half of the project was walked: the devices whose UUID begins with 8 to f.
  const devices = (await api('GET', `${projectPath}/devices/`, { token: f.user.token })).body as Array<{ id: string; group_ids: string[] }>;
  const secondHalf = devices.filter((device) => device.id[0]! >= '8');
  expect(done.added).toBe(secondHalf.length);
  expect(devices.filter((device) => device.group_ids.includes(group.id)).map((device) => device.id).sort()).toEqual(secondHalf.map((device) => device.id).sort());
  const audited = await eventually(
    async () => (await api('GET', `${projectPath}/audit/?action=group.members_changed`, { token: f.user.token })).body as Array<{ details: Record<string, unknown> }>,
    (list) => list.length > 0,
  );
  expect(audited).toEqual([expect.objectContaining({ details: expect.objectContaining({ change_id: id, added: secondHalf.length }) })]);
}, 120_000);
