import { randomUUID } from 'node:crypto';
import { collectionOf, connectMongo, ensureIndexes } from '@ota/mongo';
import { seededRandom, testStack } from '@ota/testkit';
import mongoose, { type Connection } from 'mongoose';
import { storedDevice } from './stored-device';
import { registerModels, type RegistryModels } from '../src/adapters/mongo/models';
import { writeGroupCopies } from '../src/previous-release/group-copies';
import { groupMembers, MongoRegistryStore } from '../src/adapters/mongo/mongo-registry-store';
import { writeEveryProfile } from '../src/adapters/mongo/device-profiles';
import { DEVICE_PAGE_LEVELS, SAMPLE_DEVICES, deviceUuid } from '@ota/ids';
import { Registry } from '../src/domain/registry';
import { checkDevice, type DeviceCheckDeps } from '../src/domain/device-check';
import { HealthTallies } from '../src/domain/device-health';
import type { DecisionRecord, Device } from '../src/domain/model';

// Registry's store alone, against the run's real MongoDB-protocol server (FerretDB here), in a
// database of its own: slugs and names unique per project, an owner's device cap that racing
// registrations cannot overshoot, a check's device write and decision records, targets
// counted, and memberships.

let mongo: Connection;
let models: RegistryModels;
let store: MongoRegistryStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, seconds));

/** A device as registry makes one, made at the start of the test's clock. */
function device(projectId: string, deviceId: string, channelId: string, overrides: Partial<Device> = {}): Device {
  return storedDevice(projectId, deviceId, channelId, at(0), overrides);
}

async function project(projectId = randomUUID()) {
  const ownerId = randomUUID();
  expect(await store.insertProject({ id: projectId, name: 'Fleet', slug: `fleet-${projectId.slice(0, 8)}`, ownerId, createdAt: at(0) })).toBe('inserted');
  const channel = { id: randomUUID(), projectId, name: 'stable', isDefault: true, createdAt: at(0) };
  expect(await store.insertChannel(channel)).toBe('inserted');
  return { projectId, ownerId, channelId: channel.id };
}

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_registry_${randomUUID().slice(0, 8)}` });
  models = registerModels(mongo);
  await ensureIndexes(mongo);
  store = new MongoRegistryStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

it('keeps slugs unique per owner and channel names unique per project', async () => {
  const { projectId, ownerId } = await project();
  const slug = (await store.findProject(projectId))!.slug;
  expect(await store.insertProject({ id: randomUUID(), name: 'Again', slug, ownerId, createdAt: at(1) })).toBe('slug_taken');
  expect(await store.insertProject({ id: randomUUID(), name: 'Other owner', slug, ownerId: randomUUID(), createdAt: at(1) })).toBe('inserted');
  expect(await store.insertChannel({ id: randomUUID(), projectId, name: 'stable', isDefault: false, createdAt: at(1) })).toBe('name_taken');
  expect((await store.findDefaultChannel(projectId))?.name).toBe('stable');
});

it('registers devices up to the owner’s cap across racing registrations, and frees a place when one is deleted', async () => {
  const { projectId, ownerId, channelId } = await project();
  const results = await Promise.all(Array.from({ length: 8 }, (_, index) => store.registerDevice(device(projectId, `racer-${index}`, channelId), ownerId, 5)));
  expect(results.filter((result) => result !== 'over_limit')).toHaveLength(5);
  expect(await store.countDevices(projectId)).toEqual({ count: 5, estimated: false });

  // The same device registered twice is one device.
  const known = (results.find((result) => result !== 'over_limit') as { device: Device }).device;
  const again = await store.registerDevice(device(projectId, known.deviceId, channelId), ownerId, 100);
  expect(again).toEqual({ device: expect.objectContaining({ id: known.id }), created: false });

  expect(await store.deleteDevice(projectId, known.id, ownerId)).toBe(true);
  expect(await store.registerDevice(device(projectId, 'after-delete', channelId), ownerId, 5)).toMatchObject({ created: true });
  expect(await store.registerDevice(device(projectId, 'one-too-many', channelId), ownerId, 5)).toBe('over_limit');
});

it('refuses devices’ own registrations at the cap from memory until a place is given back on this replica or the memory lapses', async () => {
  let clock = Date.UTC(2026, 10, 24, 12);
  const replica = new MongoRegistryStore(models, { devicePageReadBudget: 500, countSample: SAMPLE_DEVICES, now: () => clock });
  const other = new MongoRegistryStore(models);
  const { projectId, ownerId, channelId } = await project();
  const register = (deviceId: string, cap = 3) => replica.registerDevice(device(projectId, deviceId, channelId), ownerId, cap, 'check');
  const idOf = async (deviceId: string) => (await replica.findDevice(projectId, { deviceId }))!.id;
  for (const deviceId of ['a', 'b', 'c']) expect(await register(deviceId)).toMatchObject({ created: true });
  expect(await register('d')).toBe('over_limit');
  // Another replica gives a place back: this one goes on refusing devices' checks, without
  // reading the places again; a person's pre-provisioning reads them, and takes it.
  expect(await other.deleteDevice(projectId, await idOf('a'), ownerId)).toBe(true);
  expect(await register('d')).toBe('over_limit');
  expect(await replica.registerDevice(device(projectId, 'provisioned', channelId), ownerId, 3, 'provisioning')).toMatchObject({ created: true });
  // Once the memory lapses, a place given back elsewhere is taken by a check too.
  expect(await other.deleteDevice(projectId, await idOf('b'), ownerId)).toBe(true);
  expect(await register('d')).toBe('over_limit');
  clock += 3_600_000;
  expect(await register('d')).toMatchObject({ created: true });
  // A place given back on this replica is taken at once.
  expect(await register('e')).toBe('over_limit');
  expect(await replica.deleteDevice(projectId, await idOf('c'), ownerId)).toBe(true);
  expect(await register('e')).toMatchObject({ created: true });
  // A device that registered meanwhile is found, not refused; a higher cap is tried at once.
  expect(await register('f')).toBe('over_limit');
  expect(await register('d')).toEqual({ device: expect.objectContaining({ deviceId: 'd' }), created: false });
  expect(await register('f', 4)).toMatchObject({ created: true });
  expect(await store.countDevices(projectId)).toEqual({ count: 4, estimated: false });
});

it('reads an owner’s places once for devices’ checks that arrive together at its cap, and registers up to the cap among them', async () => {
  const { projectId, ownerId, channelId } = await project();
  // A replica of its own, whose driver reports each command: which finds read the owner's places.
  const monitored = mongoose.createConnection(testStack().mongodbUri, { dbName: mongo.name, monitorCommands: true });
  await monitored.asPromise();
  try {
    const monitoredModels = registerModels(monitored);
    const replica = new MongoRegistryStore(monitoredModels);
    let placeReads = 0;
    monitored.getClient().on('commandStarted', (event) => {
      const { find, filter } = event.command as { find?: string; filter?: { scope?: unknown } };
      if (find === 'device_places' && filter?.scope === ownerId) placeReads += 1;
    });
    const checks = (on: MongoRegistryStore, prefix: string, count: number) =>
      Promise.all(Array.from({ length: count }, (_, index) => on.registerDevice(device(projectId, `${prefix}-${index}`, channelId), ownerId, 5, 'check')));
    // Under the cap, checks arriving together still take every free place and no more.
    const first = await checks(replica, 'early', 8);
    expect(first.filter((result) => result !== 'over_limit')).toHaveLength(5);
    // At the cap, on a replica that has not yet found it there, twelve devices' first checks at
    // once: the places are read once, not by each.
    const fresh = new MongoRegistryStore(monitoredModels);
    placeReads = 0;
    const atCap = await checks(fresh, 'late', 12);
    expect(atCap.every((result) => result === 'over_limit')).toBe(true);
    expect(placeReads).toBe(1);
    expect(await store.countDevices(projectId)).toEqual({ count: 5, estimated: false });
  } finally {
    await monitored.close();
  }
});

/** A decision record of check `seq` of the device. */
const decisionRecord = (projectId: string, deviceId: string, seq: number, overrides: Partial<DecisionRecord> = {}): DecisionRecord => ({
  id: `event-${seq}`,
  projectId,
  deviceId,
  createdAt: at(seq),
  decision: 'no_update',
  status: 'no_active_deployment',
  deploymentId: '',
  artifactBuildNumber: null,
  reportedBuildNumber: 0,
  reportedVersion: '1.0.0',
  message: 'no active deployment targets this device',
  ...overrides,
});

it('a check-in counts the check and writes the heartbeat in one write, and returns the device as it was before it', async () => {
  const { projectId, ownerId, channelId } = await project();
  await store.registerDevice(device(projectId, 'plain', channelId), ownerId, 10);
  await store.registerDevice(device(projectId, 'off', channelId, { active: false }), ownerId, 10);
  await store.registerDevice(device(projectId, 'own-token', channelId, { tokenRequired: true }), ownerId, 10);
  const reported = { framework: 'esp_idf', chipFamily: 'esp32s3', versionLabel: '2.0.0' };
  const checkIn = (deviceId: string, seconds: number, viaProjectToken = true) => store.checkIn({ projectId, deviceId, reported, viaProjectToken, at: at(seconds) });

  expect(await checkIn('plain', 1)).toMatchObject({ checkCount: 0, lastCheckAt: null, chipFamily: 'esp32' });
  expect(await checkIn('plain', 2)).toMatchObject({ checkCount: 1, lastCheckAt: at(1), lastSeen: at(1), chipFamily: 'esp32s3', currentVersionLabel: '2.0.0' });
  // No heartbeat for an inactive device, nor for one with its own token that checks with the project token; both are counted.
  for (const [deviceId, viaProjectToken] of [['off', true], ['own-token', true]] as const) {
    expect(await checkIn(deviceId, 3, viaProjectToken)).toMatchObject({ checkCount: 0 });
    expect(await store.findDevice(projectId, { deviceId })).toMatchObject({ checkCount: 1, lastCheckAt: at(3), lastSeen: null, chipFamily: 'esp32' });
  }
  await checkIn('own-token', 4, false);
  expect(await store.findDevice(projectId, { deviceId: 'own-token' })).toMatchObject({ checkCount: 2, lastSeen: at(4), chipFamily: 'esp32s3' });
  // An unknown device, and a device of another project, are not checked in.
  expect(await checkIn('unknown', 5)).toBeNull();
  expect(await store.checkIn({ projectId: randomUUID(), deviceId: 'plain', reported, viaProjectToken: true, at: at(5) })).toBeNull();
  expect(await store.findDevice(projectId, { deviceId: 'plain' })).toMatchObject({ checkCount: 2, lastCheckAt: at(2) });
});

it('a first check registers the device already checked in with its outcome, so that its next check-in counts from one', async () => {
  const { projectId, ownerId } = await project();
  let now = at(1);
  const deps: DeviceCheckDeps = {
    store,
    views: { activeDeployments: () => [], artifact: () => undefined },
    offers: {
      recordOffer: () => {
        throw new Error('nothing is offered');
      },
    },
    health: new HealthTallies(),
    warn: (error) => {
      throw error;
    },
    now: () => now,
  };
  const call = { requestId: 'check' };
  const input = { projectId, ownerId, deviceId: 'newcomer', reported: { framework: 'esp_idf', chipFamily: 'esp32' }, viaProjectToken: true, maxDevices: 10, currentBuildNumber: 1 };
  expect(await checkDevice(deps, input, call)).toMatchObject({ status: 'no_active_deployment' });
  // The registration stored the outcome known before it, so the record wrote nothing more on the device.
  expect(await store.findDevice(projectId, { deviceId: 'newcomer' })).toMatchObject({ checkCount: 1, lastCheckAt: at(1), lastSeen: at(1), lastCheckStatus: 'no_active_deployment' });
  now = at(2);
  await checkDevice(deps, input, call);
  expect(await store.findDevice(projectId, { deviceId: 'newcomer' })).toMatchObject({ checkCount: 2, lastCheckAt: at(2) });
  expect((await store.listDecisionRecords(projectId, deviceUuid(projectId, 'newcomer'))).map((event) => event.createdAt)).toEqual([at(2), at(1)]);
  // A device token never registers.
  await expect(checkDevice(deps, { ...input, deviceId: 'stranger', viaProjectToken: false }, call)).rejects.toThrow('device not found');
  expect(await store.findDevice(projectId, { deviceId: 'stranger' })).toBeNull();
});

it('records each decision with one insert, writes the outcome only when it changed, and a trim keeps the newest 20', async () => {
  const { projectId, ownerId, channelId } = await project();
  const registered = await store.registerDevice(device(projectId, 'chatty', channelId), ownerId, 10);
  const { id } = (registered as { device: Device }).device;
  for (let seq = 1; seq <= 45; seq += 1) {
    const before = await store.checkIn({ projectId, deviceId: 'chatty', reported: { framework: 'esp_idf', chipFamily: 'esp32' }, viaProjectToken: true, at: at(seq) });
    expect(before?.checkCount).toBe(seq - 1);
    await store.recordCheck({ projectId, id, seq, previousStatus: before!.lastCheckStatus, record: decisionRecord(projectId, 'chatty', seq) });
    // The check trims on every 20th check (checkDevice).
    if (seq % 20 === 0) await store.trimDecisionRecords(id, seq - 20);
  }
  const events = await store.listDecisionRecords(projectId, id);
  expect(events.map((recorded) => recorded.id)).toEqual(Array.from({ length: 25 }, (_, index) => `event-${45 - index}`));
  expect(await mongo.db!.collection('check_records').countDocuments({ device_id: id })).toBe(25);
  expect(await store.findDevice(projectId, { id })).toMatchObject({ lastCheckStatus: 'no_active_deployment', checkCount: 45 });

  // The outcome is written when it differs from the one the check-in returned, and only then.
  await store.recordCheck({ projectId, id, seq: 46, previousStatus: 'no_active_deployment', record: decisionRecord(projectId, 'chatty', 46, { status: 'up_to_date' }) });
  expect(await store.findDevice(projectId, { id })).toMatchObject({ lastCheckStatus: 'up_to_date' });
  await store.recordCheck({ projectId, id, seq: 47, previousStatus: 'offered', record: decisionRecord(projectId, 'chatty', 47, { status: 'offered' }) });
  expect(await store.findDevice(projectId, { id })).toMatchObject({ lastCheckStatus: 'up_to_date' });

  // Another project sees none of it; deleting the device deletes its records.
  expect(await store.listDecisionRecords(randomUUID(), id)).toEqual([]);
  expect(await store.findDevice(randomUUID(), { id })).toBeNull();
  expect(await store.deleteDevice(projectId, id, ownerId)).toBe(true);
  expect(await mongo.db!.collection('check_records').countDocuments({ device_id: id })).toBe(0);
});

it('writes a whole check as the release before’s gateways send it: the device in one update, the record in one insert', async () => {
  const { projectId, ownerId, channelId } = await project();
  const registered = await store.registerDevice(device(projectId, 'older-gateway', channelId), ownerId, 10);
  const { id } = (registered as { device: Device }).device;
  const record = decisionRecord(projectId, 'older-gateway', 8, { status: 'up_to_date' });
  await store.recordWholeCheck({ projectId, id, checkCount: 7, reported: { framework: 'esp_idf', chipFamily: 'esp32c3' }, record });
  expect(await store.findDevice(projectId, { id })).toMatchObject({ checkCount: 8, lastCheckAt: at(8), lastSeen: at(8), lastCheckStatus: 'up_to_date', chipFamily: 'esp32c3' });
  expect(await store.listDecisionRecords(projectId, id)).toEqual([record]);
});

it('lists the history slots the releases before wrote on the device (objects, then strings) with the records, each record once', async () => {
  const { projectId, ownerId, channelId } = await project();
  const registered = await store.registerDevice(device(projectId, 'upgraded', channelId), ownerId, 10);
  const { id } = (registered as { device: Device }).device;
  const slotEntry = (seq: number) => ({
    seq,
    id: `legacy-${seq}`,
    created_at: at(seq),
    decision: 'no_update',
    status: 'up_to_date',
    deployment_id: '',
    artifact_build_number: null,
    reported_build_number: seq,
    reported_version: `1.0.${seq}`,
    message: 'the device runs the highest build assigned to it',
  });
  // Check 1 as an object slot, check 2 as a string slot (the ten fields as one JSON array), straight into the store.
  const asString = (entry: ReturnType<typeof slotEntry>) =>
    JSON.stringify([entry.seq, entry.id, entry.created_at.getTime(), entry.decision, entry.status, entry.deployment_id, null, entry.reported_build_number, entry.reported_version, entry.message]);
  await mongo.db!.collection('devices').updateOne({ _id: id as never }, { $set: { 'check_history.s1': slotEntry(1), 'check_history.s2': asString(slotEntry(2)), check_count: 2 } });
  const before = await store.checkIn({ projectId, deviceId: 'upgraded', reported: { framework: 'esp_idf', chipFamily: 'esp32' }, viaProjectToken: true, at: at(3) });
  const offered = decisionRecord(projectId, 'upgraded', 3, {
    id: 'current-3',
    decision: 'offered',
    status: 'offered',
    deploymentId: randomUUID(),
    artifactBuildNumber: 7,
    reportedBuildNumber: 2,
    // Whatever a device sends as its version label comes back as it was.
    reportedVersion: '2.0 "rc|1" \\ ü',
    message: 'build 7 is offered',
  });
  await store.recordCheck({ projectId, id, seq: before!.checkCount + 1, previousStatus: before!.lastCheckStatus, record: offered });
  // A slot that was also copied into the records (as a migration may) is listed once.
  await mongo.db!.collection('check_records').insertOne({ _id: 'legacy-2' as never, device_id: id, seq: 2, entry: asString(slotEntry(2)) });

  expect(await store.listDecisionRecords(projectId, id)).toEqual([
    offered,
    ...[2, 1].map((seq) => ({
      id: `legacy-${seq}`,
      projectId,
      deviceId: 'upgraded',
      createdAt: at(seq),
      decision: 'no_update',
      status: 'up_to_date',
      deploymentId: '',
      artifactBuildNumber: null,
      reportedBuildNumber: seq,
      reportedVersion: `1.0.${seq}`,
      message: 'the device runs the highest build assigned to it',
    })),
  ]);
});

it('counts the devices a deployment’s targets reach, and lists group members', async () => {
  const { projectId, ownerId, channelId } = await project();
  const beta = { id: randomUUID(), projectId, name: 'beta', isDefault: false, createdAt: at(1) };
  await store.insertChannel(beta);
  const group = { id: randomUUID(), projectId, name: 'lab', createdAt: at(1) };
  expect(await store.insertGroup(group)).toBe('inserted');
  const ids: string[] = [];
  for (const [deviceId, channel] of [['s1', channelId], ['s2', channelId], ['b1', beta.id], ['b2', beta.id]] as const) {
    ids.push(((await store.registerDevice(device(projectId, deviceId, channel), ownerId, 10)) as { device: Device }).device.id);
  }
  await store.setMembership(projectId, ids[0]!, group.id, true);
  await store.setMembership(projectId, ids[2]!, group.id, true);

  expect(await store.countDevices(projectId, { groupIds: [], channelIds: [] })).toEqual({ count: 4, estimated: false });
  expect(await store.countDevices(projectId, { groupIds: [], channelIds: [beta.id] })).toEqual({ count: 2, estimated: false });
  expect(await store.countDevices(projectId, { groupIds: [group.id], channelIds: [] })).toEqual({ count: 2, estimated: false });
  // Both lists: a device must match a group and a channel.
  expect(await store.countDevices(projectId, { groupIds: [group.id], channelIds: [beta.id] })).toEqual({ count: 1, estimated: false });
  expect((await store.listDevices(projectId, { groupId: group.id })).map((listed) => listed.deviceId).sort()).toEqual(['b1', 's1']);
  expect((await store.countMembersPerGroup(projectId, [group.id])).counts.get(group.id)).toBe(2);

  await store.setMembership(projectId, ids[0]!, group.id, false);
  expect(await store.countDevices(projectId, { groupIds: [group.id], channelIds: [] })).toEqual({ count: 1, estimated: false });
});

it('lists each device with the groups that list it, under overlapping bulk changes of several groups', async () => {
  const { projectId, ownerId, channelId } = await project();
  const ids: string[] = [];
  for (let i = 0; i < 60; i += 1) ids.push(((await store.registerDevice(device(projectId, `bulk-${i}`, channelId), ownerId, 1000)) as { device: Device }).device.id);
  const groups = await Promise.all(
    ['a', 'b', 'c'].map(async (name) => {
      const group = { id: randomUUID(), projectId, name, createdAt: at(1) };
      expect(await store.insertGroup(group)).toBe('inserted');
      return group.id;
    }),
  );
  const random = seededRandom(Number(process.env.OTA_RACE_SEED ?? 5150));
  const pick = () => ids.filter(() => random() < 0.5);
  for (let round = 0; round < 50; round += 1) {
    // Each group gets a random add and a random remove at once, all three groups in parallel, with
    // single changes of the same devices racing them.
    const changes = groups.map((groupId) => store.changeMemberships(projectId, groupId, pick(), pick()));
    const singles = ids.slice(0, 6).map((id, index) => store.setMembership(projectId, id, groups[index % 3]!, random() < 0.5));
    await Promise.all([...changes, ...singles]);
    const members = new Map<string, string[]>();
    for (const groupId of groups) {
      for (const member of await store.listDevices(projectId, { groupId })) members.set(member.id, [...(members.get(member.id) ?? []), groupId]);
    }
    const everyone = await store.listDevices(projectId, {});
    const differ = everyone.filter((listed) => JSON.stringify([...listed.groupIds].sort()) !== JSON.stringify([...(members.get(listed.id) ?? [])].sort()));
    expect({ round, differ: differ.length }).toEqual({ round, differ: 0 });
  }
  // The counts are exact: adding every device to a group that has some of them counts the others.
  const before = (await store.countMembersPerGroup(projectId, [groups[0]!])).counts.get(groups[0]!) ?? 0;
  expect(await store.changeMemberships(projectId, groups[0]!, ids, [])).toEqual({ added: 60 - before, removed: 0 });
  expect(await store.changeMemberships(projectId, groups[0]!, ids, [])).toEqual({ added: 0, removed: 0 });
}, 180_000);

/** `count` device_ids of `projectId` whose UUIDs share their first DEVICE_PAGE_LEVELS hex digits, for each of `counts`, each set in a bucket of its own. */
function devicesInBuckets(projectId: string, counts: readonly number[]): string[][] {
  const byPrefix = new Map<string, string[]>();
  for (let i = 0; i < 600_000; i += 1) {
    const deviceId = `dense-${i}`;
    const prefix = deviceUuid(projectId, deviceId).slice(0, DEVICE_PAGE_LEVELS);
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), deviceId]);
  }
  const fullest = [...byPrefix.values()].sort((a, b) => b.length - a.length);
  return counts.map((count, index) => {
    expect(fullest[index]!.length).toBeGreaterThanOrEqual(count);
    return fullest[index]!.slice(0, count);
  });
}

it.each([
  ['whole', 12],
  ['one device at a time', 3],
])('lists a page whose devices fill a page bucket with their groups, its other bucket read %s', async (_how, others) => {
  // 40 devices in one of the project's finest page buckets and `others` in a second: with one
  // membership each in the first, the second is read whole when it holds at least 40 / 8 of the
  // page's devices, and device by device otherwise (withGroups).
  const { projectId, ownerId, channelId } = await project();
  const [dense, sparse] = devicesInBuckets(projectId, [40, others]);
  const ids: string[] = [];
  for (const deviceId of [...dense!, ...sparse!]) ids.push(((await store.registerDevice(device(projectId, deviceId, channelId), ownerId, 0)) as { device: Device }).device.id);
  const [a, b] = [randomUUID(), randomUUID()];
  for (const [id, name] of [[a, 'a'], [b, 'b']] as const) expect(await store.insertGroup({ id, projectId, name, createdAt: at(1) })).toBe('inserted');
  // Every device of the dense bucket is in a group; of the other bucket, some in both and some in none.
  await store.changeMemberships(projectId, a, ids.filter((_, index) => index % 2 === 0), []);
  await store.changeMemberships(projectId, b, ids.filter((_, index) => index % 2 === 1 || index >= 40), []);
  await store.changeMemberships(projectId, a, [], ids.slice(40).filter((_, index) => index % 3 === 2));
  await store.changeMemberships(projectId, b, [], ids.slice(40).filter((_, index) => index % 3 === 2));
  const expectedGroups = new Map<string, string[]>();
  for (const groupId of [a, b]) {
    for (const member of await groupMembers(models, groupId)) expectedGroups.set(member, [...(expectedGroups.get(member) ?? []), groupId]);
  }
  const page = await store.readDevicePage(projectId, {}, { limit: 100 });
  expect(page.devices.map((each) => each.id).sort()).toEqual([...ids].sort());
  expect(page.devices.filter((each) => each.groupIds.length === 0)).toHaveLength(Math.floor(others / 3));
  expect(page.devices.map((each) => [each.id, each.groupIds])).toEqual(page.devices.map((each) => [each.id, [...(expectedGroups.get(each.id) ?? [])].sort()]));
}, 120_000);

describe('a device list read a page at a time', () => {
  // Large enough that pages walk buckets of the finer levels, small enough to register here.
  const FLEET = 6000;
  // A device's UUID, and so its page bucket, follows from its project's id and its device_id. With
  // a fixed project id the buckets a count samples hold the same devices every run, and a count
  // from a sample is off by the same amount every run: with a random one, a count from 256
  // devices that is about 9% off (one standard deviation) was once 36% off.
  const FLEET_PROJECT_ID = '6a1f3c2e-4b7d-4e19-9c52-0d8e7f4a1b63';
  const reads: number[] = [];
  let paged: MongoRegistryStore;
  let fleet: { projectId: string; everyone: Device[]; bigGroup: string; smallGroup: string };

  beforeAll(async () => {
    paged = new MongoRegistryStore(registerModels(mongo), { devicePageReadBudget: 500, countSample: 1024, onDevicePageRead: (devices) => reads.push(devices) });
    const { projectId, ownerId, channelId } = await project(FLEET_PROJECT_ID);
    const everyone: Device[] = [];
    for (let from = 0; from < FLEET; from += 50) {
      const batch = Array.from({ length: 50 }, (_, index) => device(projectId, `unit-${from + index}`, channelId, { chipFamily: (from + index) % 3 === 0 ? 'esp32c3' : 'esp32' }));
      // Uncapped (0): the place is drawn, not searched for among every place the owner holds.
      await Promise.all(batch.map((each) => store.registerDevice(each, ownerId, 0)));
      everyone.push(...batch);
    }
    const [bigGroup, smallGroup] = [randomUUID(), randomUUID()];
    for (const [id, name] of [[bigGroup, 'big'], [smallGroup, 'small']] as const) expect(await store.insertGroup({ id, projectId, name, createdAt: at(1) })).toBe('inserted');
    await store.changeMemberships(projectId, bigGroup, everyone.filter((_, index) => index % 3 === 1).map((each) => each.id), []);
    await store.changeMemberships(projectId, smallGroup, everyone.slice(0, 30).map((each) => each.id), []);
    fleet = { projectId, everyone, bigGroup, smallGroup };
  }, 300_000);

  /** Every page of a listing, following each page's next start, and what each page said. */
  async function everyPage(filter: Parameters<MongoRegistryStore['readDevicePage']>[1], limit: number) {
    reads.length = 0;
    const pages = [];
    let afterId: string | undefined;
    do {
      const page = await paged.readDevicePage(fleet.projectId, filter, { limit, afterId });
      pages.push(page);
      afterId = page.nextAfterId;
    } while (afterId && pages.length < 1000);
    return { pages, listed: pages.flatMap((page) => page.devices.map((each) => each.id)), reads: [...reads] };
  }

  const expected = (keep: (each: Device, index: number) => boolean) => fleet.everyone.filter(keep).map((each) => each.id).sort();

  it.each([
    ['every device', {}, () => true],
    ['a chip family', { chipFamily: 'esp32c3' }, (_: Device, index: number) => index % 3 === 0],
    ['a large group', { groupId: 'big' }, (_: Device, index: number) => index % 3 === 1],
    ['a small group', { groupId: 'small' }, (_: Device, index: number) => index < 30],
  ])('lists %s once each, in UUID order, reading a bounded share of the project per page', async (_name, filter, keep) => {
    const resolved = 'groupId' in filter ? { groupId: filter.groupId === 'big' ? fleet.bigGroup : fleet.smallGroup } : filter;
    const { pages, listed, reads: perPage } = await everyPage(resolved, 97);
    expect(listed).toEqual(expected(keep));
    // Every page but the last is full: the budget is not reached without a text search.
    expect(pages.slice(0, -1).every((page) => page.devices.length === 97)).toBe(true);
    // A page of 97 reads a few buckets, or a few thousand matches at once, never the project.
    expect(Math.max(...perPage)).toBeLessThan(FLEET / 2);
    const first = pages[0]!.total;
    if (first.estimated) expect(Math.abs(first.count - listed.length) / listed.length).toBeLessThan(0.4);
    else expect(first.count).toBe(listed.length);
  });

  it('counts a small match set exactly', async () => {
    const { pages } = await everyPage({ groupId: fleet.smallGroup }, 10);
    expect(pages.map((page) => page.total)).toEqual(pages.map(() => ({ count: 30, estimated: false })));
  });

  it('ends a text search that finds little when its read budget is spent, saying where to go on, and finds every match', async () => {
    const { pages, listed, reads: perPage } = await everyPage({ search: 'NIT-12' }, 50);
    expect(listed).toEqual(expected((each) => each.deviceId.includes('nit-12')));
    // The budget is 500 devices: a page stops before a bucket that would pass it (here a sixteenth
    // of the project, the coarsest level a page may walk), and the next goes on past it.
    expect(pages.length).toBeGreaterThan(3);
    expect(Math.max(...perPage)).toBeLessThanOrEqual(500);
    expect(perPage.reduce((sum, read) => sum + read, 0)).toBeLessThan(FLEET + pages.length * 100);
    expect(pages.slice(0, -1).some((page) => page.devices.length < 50)).toBe(true);
    // It reads ids first, then the devices it keeps: each whole, as a page without a search has it.
    for (const device of pages.flatMap((page) => page.devices)) expect(device).toEqual(await paged.findDevice(fleet.projectId, { id: device.id }));
  });

  it('counts a large project from a sample of its buckets, labelled as estimated, and stops a bounded count early', async () => {
    const near = (counted: { count: number; estimated: boolean }, exact: number, within = 0.15) => {
      expect(counted.estimated).toBe(true);
      expect(Math.abs(counted.count - exact) / exact).toBeLessThan(within);
    };
    near(await paged.countDevices(fleet.projectId), FLEET);
    // Targets of one group are matched by the store, so every device read counts: a quarter of the
    // sample's devices are read (about 6% off; four times that here, so that another project id's draw passes too).
    near(await paged.countDevices(fleet.projectId, { groupIds: [fleet.bigGroup], channelIds: [] }), FLEET / 3, 0.25);
    const families = await paged.countChipFamilies(fleet.projectId);
    near({ count: families.counts.get('esp32c3')!, estimated: families.estimated }, FLEET / 3);
    // Groups are counted from a sample of the project's memberships, here 2,030, which a sample of
    // 4,096 reads whole: exactly. (One of 1,024 reads them whole only while the first sixteenth
    // of the id space holds fewer than 147 of them, which a random fleet sometimes does not.) From a
    // smaller sample, a group it sees often is scaled up, and one it sees seldom is counted exactly.
    const whole = await new MongoRegistryStore(registerModels(mongo), { devicePageReadBudget: 500, countSample: 4096 }).countMembersPerGroup(fleet.projectId, [fleet.bigGroup, fleet.smallGroup]);
    expect([[...whole.counts], [...whole.estimated]]).toEqual([[[fleet.bigGroup, FLEET / 3], [fleet.smallGroup, 30]], []]);
    const sampled = await new MongoRegistryStore(registerModels(mongo), { devicePageReadBudget: 500, countSample: 256 }).countMembersPerGroup(fleet.projectId, [fleet.bigGroup, fleet.smallGroup]);
    near({ count: sampled.counts.get(fleet.bigGroup)!, estimated: sampled.estimated.has(fleet.bigGroup) }, FLEET / 3);
    expect([sampled.counts.get(fleet.smallGroup), sampled.estimated.has(fleet.smallGroup)]).toEqual([30, false]);
    // So is a target set of one small group.
    expect(await paged.countDevices(fleet.projectId, { groupIds: [fleet.smallGroup], channelIds: [] })).toEqual({ count: 30, estimated: false });
    reads.length = 0;
    expect(await paged.countDevices(fleet.projectId, undefined, 2)).toEqual({ count: 2, estimated: false });
  });

  it('counts a large project’s channels and chip families from a sample of its devices’ profiles', async () => {
    // A sample of 256 fits in 12 profile buckets of about 23 devices here, so the profiles serve it
    // (with the default 1,024, this project is sampled from its devices, as above).
    const sampled = new MongoRegistryStore(registerModels(mongo), { devicePageReadBudget: 500, countSample: 256 });
    const near = (count: number | undefined, estimated: boolean, exact: number) => {
      expect(estimated).toBe(true);
      // 256 devices count a third of the fleet about 9% off; three times that, so that another project id's draw passes too.
      expect(Math.abs(count! - exact) / exact).toBeLessThan(0.3);
    };
    const families = await sampled.countChipFamilies(fleet.projectId);
    expect([...families.counts.keys()].sort()).toEqual(['esp32', 'esp32c3']);
    near(families.counts.get('esp32c3'), families.estimated, FLEET / 3);
    near(families.counts.get('esp32'), families.estimated, (2 * FLEET) / 3);
    const channelId = fleet.everyone[0]!.channelId;
    const channels = await sampled.countDevicesPerChannel(fleet.projectId, [channelId, 'no-such-channel']);
    near(channels.counts.get(channelId), channels.estimated.has(channelId), FLEET);
    expect([channels.counts.get('no-such-channel'), channels.estimated.has('no-such-channel')]).toEqual([0, false]);
  });

  it('samples the counts from the finest profile buckets where a few of them make the sample', async () => {
    // A sample of 32 takes at most 32 of this project's 4,096 finest buckets (about 1.5 devices
    // each here). For this count the profiles' coarser keys are moved away: only a sample by the
    // finer keys finds the devices, where one by the coarser would read 32 empty buckets.
    const sampled = new MongoRegistryStore(registerModels(mongo), { devicePageReadBudget: 500, countSample: 32 });
    await collectionOf(models.DeviceProfile).updateMany({ k: { $regex: `^${fleet.projectId}/` } }, { $set: { k: 'moved-away' } });
    try {
      const families = await sampled.countChipFamilies(fleet.projectId);
      expect([[...families.counts.keys()].sort(), families.estimated]).toEqual([['esp32', 'esp32c3'], true]);
      // Scaled up from a few dozen devices: the fleet's order of magnitude, no closer.
      const total = [...families.counts.values()].reduce((sum, count) => sum + count, 0);
      expect(total).toBeGreaterThan(FLEET / 4);
      expect(total).toBeLessThan(FLEET * 4);
    } finally {
      await writeEveryProfile(models);
    }
  });

  it('counts a small project exactly', async () => {
    const { projectId, ownerId, channelId } = await project();
    for (let index = 0; index < 40; index += 1) await store.registerDevice(device(projectId, `few-${index}`, channelId), ownerId, 0);
    expect(await paged.countDevices(projectId)).toEqual({ count: 40, estimated: false });
    expect(await paged.countDevices(projectId, { groupIds: [], channelIds: [channelId] })).toEqual({ count: 40, estimated: false });
    expect((await paged.countChipFamilies(projectId)).counts.get('esp32')).toBe(40);
  });

  it('starts a page after a device named by device_id as after its UUID', async () => {
    const sorted = expected(() => true);
    const registry = new Registry({ store: paged });
    const named = fleet.everyone.find((each) => each.id === sorted[100])!;
    const page = await registry.readDevicePage(fleet.projectId, {}, { limit: 5, afterDeviceId: named.deviceId });
    expect(page.devices.map((each) => each.id)).toEqual(sorted.slice(101, 106));
  });
});

it('leaves out of a group page and a text search a member whose device is gone before its memberships, and lists the rest with their groups', async () => {
  const { projectId, ownerId, channelId } = await project();
  const devices = Array.from({ length: 12 }, (_, index) => device(projectId, `gone-${index}`, channelId));
  for (const each of devices) await store.registerDevice(each, ownerId, 0);
  const [first, second] = [randomUUID(), randomUUID()];
  for (const [id, name] of [[first, 'first'], [second, 'second']] as const) expect(await store.insertGroup({ id, projectId, name, createdAt: at(1) })).toBe('inserted');
  await store.changeMemberships(projectId, first, devices.map((each) => each.id), []);
  await store.changeMemberships(projectId, second, devices.slice(0, 6).map((each) => each.id), []);
  // A deletion removes the device, then its memberships: between the two, a page reads this.
  const gone = devices[3]!;
  await models.Device.deleteOne({ _id: gone.id });
  const listed = (page: { devices: Device[] }) => page.devices.map((each) => [each.deviceId, each.groupIds]).sort();
  const expected = devices
    .filter((each) => each !== gone)
    .map((each, index) => [each.deviceId, (index < 5 ? [first, second] : [first]).sort()])
    .sort();
  expect(listed(await store.readDevicePage(projectId, { groupId: first }, { limit: 50 }))).toEqual(expected);
  expect(listed(await store.readDevicePage(projectId, { search: 'GONE-' }, { limit: 50 }))).toEqual(expected);
});

// PREVIOUS RELEASE: before a rollback to a release that reads the devices' copies of their
// groups, the copies are written again from the memberships (docs/operations.md, "Upgrades and rollbacks").
it('writes every device’s copy of its groups from its memberships, and only the copies that differ', async () => {
  const { projectId, ownerId, channelId } = await project();
  const ids: string[] = [];
  for (let index = 0; index < 600; index += 1) {
    const registered = await store.registerDevice(device(projectId, `copy-${index}`, channelId), ownerId, 0);
    ids.push((registered as { device: Device }).device.id);
  }
  const [a, b] = [randomUUID(), randomUUID()];
  // Group a: every other device; group b: every third.
  await store.changeMemberships(projectId, a, ids.filter((_, index) => index % 2 === 0), []);
  await store.changeMemberships(projectId, b, ids.filter((_, index) => index % 3 === 0), []);
  const devices = collectionOf(models.Device);
  const expected = ids.map((id, index) => [id, [...(index % 2 === 0 ? [a] : []), ...(index % 3 === 0 ? [b] : [])].sort()]).sort();
  const copies = async () => (await devices.find({ project_id: projectId }, { projection: { group_ids: 1 } }).toArray()).map((doc) => [doc._id, doc.group_ids ?? []]).sort();
  // The database's other tests leave memberships too: the first run writes theirs and these 400
  // devices' (300 + 200 - 100 in both groups).
  expect((await writeGroupCopies(models)).written).toBeGreaterThanOrEqual(400);
  expect(await copies()).toEqual(expected);
  // Copies a release before could have left: a group the device left, none of the groups it is in.
  await devices.updateOne({ _id: ids[1]! }, { $set: { group_ids: [a] } });
  await devices.updateOne({ _id: ids[0]! }, { $set: { group_ids: [] } });
  expect(await writeGroupCopies(models)).toMatchObject({ written: 2 });
  expect(await copies()).toEqual(expected);
  expect(await writeGroupCopies(models)).toMatchObject({ written: 0 });
}, 120_000);
