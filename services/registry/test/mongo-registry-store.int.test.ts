import { randomUUID } from 'node:crypto';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerModels } from '../src/adapters/mongo/models';
import { MongoRegistryStore } from '../src/adapters/mongo/mongo-registry-store';
import { deviceUuid } from '../src/domain/device-uuid';
import type { CheckEvent, Device } from '../src/domain/model';

// Registry's store alone, against the run's real MongoDB-protocol server (FerretDB here), in a
// database of its own: slugs and names unique per project, an owner's device cap that racing
// registrations cannot overshoot, the newest 20 decision records kept on the device, targets
// counted, and memberships.

let mongo: Connection;
let store: MongoRegistryStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, seconds));

/** A device as registry makes one: its UUID derived from the project and its device_id. */
function device(projectId: string, deviceId: string, channelId: string, overrides: Partial<Device> = {}): Device {
  return {
    id: deviceUuid(projectId, deviceId),
    projectId,
    deviceId,
    framework: 'esp_idf',
    chipFamily: 'esp32',
    boardId: '',
    hardwareRevision: '',
    partitionProfile: '',
    nvsSchemaVersion: null,
    securityMode: '',
    currentBuildNumber: 0,
    currentVersionLabel: '',
    currentHash: '',
    lastOtaStatus: '',
    lastOtaReason: '',
    active: true,
    lastSeen: null,
    lastCheckAt: null,
    lastCheckStatus: '',
    channelId,
    groupIds: [],
    metadata: {},
    createdAt: at(0),
    tokenRequired: false,
    checkCount: 0,
    ...overrides,
  };
}

async function project() {
  const projectId = randomUUID();
  const ownerId = randomUUID();
  expect(await store.insertProject({ id: projectId, name: 'Fleet', slug: `fleet-${projectId.slice(0, 8)}`, ownerId, createdAt: at(0) })).toBe('inserted');
  const channel = { id: randomUUID(), projectId, name: 'stable', isDefault: true, createdAt: at(0) };
  expect(await store.insertChannel(channel)).toBe('inserted');
  return { projectId, ownerId, channelId: channel.id };
}

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_registry_${randomUUID().slice(0, 8)}` });
  const models = registerModels(mongo);
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
  expect(await store.countDevices(projectId)).toBe(5);

  // The same device registered twice is one device.
  const known = (results.find((result) => result !== 'over_limit') as { device: Device }).device;
  const again = await store.registerDevice(device(projectId, known.deviceId, channelId), ownerId, 100);
  expect(again).toEqual({ device: expect.objectContaining({ id: known.id }), created: false });

  expect(await store.deleteDevice(projectId, known.id, ownerId)).toBe(true);
  expect(await store.registerDevice(device(projectId, 'after-delete', channelId), ownerId, 5)).toMatchObject({ created: true });
  expect(await store.registerDevice(device(projectId, 'one-too-many', channelId), ownerId, 5)).toBe('over_limit');
});

it('keeps the newest 20 decision records on the device, newest first, with the heartbeat of the last check', async () => {
  const { projectId, ownerId, channelId } = await project();
  const registered = await store.registerDevice(device(projectId, 'chatty', channelId), ownerId, 10);
  const { id } = (registered as { device: Device }).device;
  const event = (index: number): CheckEvent => ({
    id: `event-${index}`,
    projectId,
    deviceId: 'chatty',
    createdAt: at(index),
    decision: 'no_update',
    status: 'no_active_deployment',
    deploymentId: '',
    artifactBuildNumber: null,
    reportedBuildNumber: 0,
    reportedVersion: '1.0.0',
    message: 'no active deployment targets this device',
  });
  for (let index = 0; index < 25; index += 1) {
    await store.recordCheck({ projectId, id, checkCount: index, reported: { framework: 'esp_idf', chipFamily: 'esp32s3', versionLabel: '1.0.0' }, event: event(index) }, 20);
  }
  const events = await store.listCheckEvents(projectId, id);
  expect(events.map((recorded) => recorded.id)).toEqual(Array.from({ length: 20 }, (_, index) => `event-${24 - index}`));
  const stored = await store.findDevice(projectId, { id });
  expect(stored).toMatchObject({ chipFamily: 'esp32s3', lastSeen: at(24), lastCheckAt: at(24), lastCheckStatus: 'no_active_deployment', checkCount: 25 });
  // Another project sees none of it.
  expect(await store.listCheckEvents(randomUUID(), id)).toEqual([]);
  expect(await store.findDevice(randomUUID(), { id })).toBeNull();
});

it('reads history slots in both forms: as the release before wrote them (objects) and as this one does (one string each)', async () => {
  const { projectId, ownerId, channelId } = await project();
  const registered = await store.registerDevice(device(projectId, 'upgraded', channelId), ownerId, 10);
  const { id } = (registered as { device: Device }).device;
  // The device's first two checks as the release before wrote them (check n in slot n - 1), straight into the store.
  const legacySlot = (seq: number) => ({
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
  await mongo.db!.collection('devices').updateOne({ _id: id as never }, { $set: { 'check_history.s0': legacySlot(1), 'check_history.s1': legacySlot(2), check_count: 2 } });
  const offered: CheckEvent = {
    id: 'current-3',
    projectId,
    deviceId: 'upgraded',
    createdAt: at(3),
    decision: 'offered',
    status: 'offered',
    deploymentId: randomUUID(),
    artifactBuildNumber: 7,
    reportedBuildNumber: 2,
    // Whatever a device sends as its version label comes back as it was.
    reportedVersion: '2.0 "rc|1" \\ ü',
    message: 'build 7 is offered',
  };
  await store.recordCheck({ projectId, id, checkCount: 2, event: offered }, 20);

  expect(await store.listCheckEvents(projectId, id)).toEqual([
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
  const stored = await mongo.db!.collection('devices').findOne({ _id: id as never });
  expect(typeof stored?.check_history.s2).toBe('string');
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

  expect(await store.countDevices(projectId, { groupIds: [], channelIds: [] })).toBe(4);
  expect(await store.countDevices(projectId, { groupIds: [], channelIds: [beta.id] })).toBe(2);
  expect(await store.countDevices(projectId, { groupIds: [group.id], channelIds: [] })).toBe(2);
  // Both lists: a device must match a group and a channel.
  expect(await store.countDevices(projectId, { groupIds: [group.id], channelIds: [beta.id] })).toBe(1);
  expect((await store.listDevices(projectId, { groupId: group.id })).devices.map((listed) => listed.deviceId).sort()).toEqual(['b1', 's1']);
  expect((await store.countMembersPerGroup(projectId)).get(group.id)).toBe(2);

  await store.setMembership(projectId, ids[0]!, group.id, false);
  expect(await store.countDevices(projectId, { groupIds: [group.id], channelIds: [] })).toBe(1);
});
