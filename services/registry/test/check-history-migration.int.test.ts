import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { api, eventually, setupProject, testStack } from '@ota/testkit';

// Before the decision history moved onto the device document, it lived in `check_events`, one
// document per slot; registry's migrate.js moves it over and drops the collection.
const registryDatabase = () => String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'registry');

function runMigration() {
  const env = { PATH: process.env.PATH, MONGODB_URI: testStack().mongodbUri, MONGODB_DATABASE: registryDatabase() };
  return spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'migrate.js')], { env, encoding: 'utf8' });
}

test("migrate.js moves a device's decisions from check_events onto the device, once", async () => {
  const f = await setupProject({ name: 'history-migration' });
  const device = await api('POST', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token, json: { device_id: 'legacy-1' } });
  expect(device.status).toBe(201);
  const legacy = [1, 2, 3].map((seq) => ({
    _id: `${device.body.id}:${seq - 1}`,
    project_id: f.project.id,
    device_uuid: device.body.id,
    device_id: 'legacy-1',
    seq,
    id: `event-${seq}`,
    created_at: new Date(Date.UTC(2026, 0, seq)),
    decision: 'no_update',
    status: 'no_active_deployment',
    deployment_id: '',
    artifact_build_number: null,
    reported_build_number: seq,
    reported_version: `1.0.${seq}`,
    message: 'there is no active deployment',
  }));
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    const database = connection.getClient().db(registryDatabase());
    await database.collection('check_events').insertMany(legacy as never[]);

    const first = runMigration();
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(JSON.parse(first.stdout).collections).not.toContain('check_events');
    expect(await database.listCollections({ name: 'check_events' }).toArray()).toEqual([]);
    // Run again (as every upgrade does): nothing to move, nothing changed.
    expect(runMigration().status).toBe(0);
  } finally {
    await connection.close();
  }

  const events = await api('GET', `/api/v1/projects/${f.project.id}/devices/${device.body.id}/check-events/`, { token: f.user.token });
  expect(events.status).toBe(200);
  expect(events.body).toEqual(
    [3, 2, 1].map((seq) => expect.objectContaining({ id: `event-${seq}`, device_id: 'legacy-1', reported_build_number: seq, reported_version: `1.0.${seq}`, status: 'no_active_deployment' })),
  );
});

test('migrate.js gives devices and memberships stored before page buckets their page keys (a membership its group keys), which lists and bulk changes then find', async () => {
  const f = await setupProject({ name: 'page-keys-migration' });
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const device = (await api('POST', `${projectPath}/devices/`, { token: f.user.token, json: { device_id: 'before-buckets' } })).body;
  const group = (await api('POST', `${projectPath}/groups/`, { token: f.user.token, json: { name: 'old-members' } })).body;
  expect((await api('POST', `${projectPath}/groups/${group.id}/members/`, { token: f.user.token, json: { device_id: device.id } })).status).toBe(201);
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    const database = connection.getClient().db(registryDatabase());
    // As the previous release stored them: no page keys, and no record of either migration.
    await database.collection('devices').updateOne({ _id: device.id }, { $unset: { page_keys: '' } });
    await database.collection('memberships').updateOne({ _id: `${group.id}:${device.id}` as never }, { $unset: { page_keys: '', group_keys: '' } });
    await database.collection('data_migrations').deleteMany({ _id: { $in: ['device_page_keys', 'membership_page_keys', 'membership_group_keys'] } as never });
    // The index of the group and the project's buckets, which the release before read by.
    await database.collection('memberships').createIndex({ group_id: 1, page_keys: 1 });

    const run = runMigration();
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const keys = [device.id.slice(0, 1), device.id.slice(0, 2), device.id.slice(0, 3)].map((prefix) => `${f.project.id}/${prefix}`);
    expect(await database.collection('devices').findOne({ _id: device.id }, { projection: { page_keys: 1 } })).toEqual({ _id: device.id, page_keys: keys });
    const groupKeys = [device.id.slice(0, 1), device.id.slice(0, 2), device.id.slice(0, 3)].map((prefix) => `${group.id}/${prefix}`);
    expect(await database.collection('memberships').findOne({ _id: `${group.id}:${device.id}` as never }, { projection: { page_keys: 1, group_keys: 1 } })).toEqual({ _id: `${group.id}:${device.id}`, page_keys: keys, group_keys: groupKeys });
    expect((await database.collection('memberships').indexes()).map((index) => index.name)).not.toContain('group_id_1_page_keys_1');
  } finally {
    await connection.close();
  }
  expect((await api('GET', `${projectPath}/devices/?limit=10`, { token: f.user.token })).body).toEqual([expect.objectContaining({ id: device.id })]);
  // A bulk removal finds the old member, and its check of the group's members agrees.
  const removal = await api('POST', `${projectPath}/groups/${group.id}/members/bulk-changes/`, { token: f.user.token, json: { action: 'remove', matching: {} } });
  expect(removal.status).toBe(202);
  const done = await eventually(
    async () => (await api('GET', removal.headers.get('location')!, { token: f.user.token })).body,
    (change) => change.state !== 'running',
  );
  expect(done).toMatchObject({ state: 'done', removed: 1 });
  expect((await api('GET', `${projectPath}/devices/${device.id}/`, { token: f.user.token })).body.group_ids).toEqual([]);
});

test('migrate.js gives page keys and profiles to more devices than FerretDB holds PostgreSQL connections (50), in one run', async () => {
  const f = await setupProject({ name: 'many-devices-migration' });
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const device = (await api('POST', `${projectPath}/devices/`, { token: f.user.token, json: { device_id: 'many-0' } })).body;
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    const database = connection.getClient().db(registryDatabase());
    const stored = (await database.collection('devices').findOne({ _id: device.id }))!;
    // 120 devices as the release before stored them: copies of one, without page keys.
    const ids = Array.from({ length: 120 }, (_, n) => `${device.id.slice(0, 30)}${String(n).padStart(6, '0')}`);
    await database.collection('devices').insertMany(ids.map((id, n) => ({ ...stored, _id: id, device_id: `many-${n + 1}`, page_keys: undefined })) as never[]);
    await database.collection('devices').updateMany({ project_id: f.project.id }, { $unset: { page_keys: '' } });
    await database.collection('data_migrations').deleteMany({ _id: { $in: ['device_page_keys', 'device_profiles'] } as never });

    // One update command with a statement per document held a connection per statement until the
    // command ended: past the pool's 50, FerretDB stopped answering every client.
    const run = spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'migrate.js')], {
      env: { PATH: process.env.PATH, MONGODB_URI: testStack().mongodbUri, MONGODB_DATABASE: registryDatabase() },
      encoding: 'utf8',
      timeout: 40_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const keyed = await database.collection('devices').find({ project_id: f.project.id }, { projection: { page_keys: 1 } }).toArray();
    expect(keyed).toHaveLength(121);
    for (const doc of keyed) expect(doc.page_keys).toEqual([1, 2, 3].map((length) => `${f.project.id}/${String(doc._id).slice(0, length)}`));
    expect(await database.collection('device_profiles').countDocuments({ _id: { $in: ids } as never })).toBe(120);
  } finally {
    await connection.close();
  }
}, 90_000);
