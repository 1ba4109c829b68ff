import { randomUUID } from 'node:crypto';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { addDeviceProfiles, addProfileCountKeys } from '../src/adapters/mongo/data-migrations';
import { profileKeysOf } from '../src/adapters/mongo/profile-buckets';
import { storedDevice } from './stored-device';
import { fleetFromDocuments, streamedFleet } from './fleet-as-read';
import { registerModels, type RegistryModels } from '../src/adapters/mongo/models';
import { MongoRegistryStore } from '../src/adapters/mongo/mongo-registry-store';
import type { Device, FleetDevice, FleetGroups } from '../src/domain/model';

// A preview reads the fleet from the devices' profiles (device-profiles.ts), not from their
// documents: every write that changes what a check decides on must leave the profile as the
// document is, one at a time and racing, on the run's real FerretDB.

let mongo: Connection;
let models: RegistryModels;
let store: MongoRegistryStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, seconds));

function device(projectId: string, deviceId: string, channelId: string): Device {
  return storedDevice(projectId, deviceId, channelId, at(0));
}

async function project() {
  const projectId = randomUUID();
  const ownerId = randomUUID();
  await store.insertProject({ id: projectId, name: 'Fleet', slug: `fleet-${projectId.slice(0, 8)}`, ownerId, createdAt: at(0) });
  return { projectId, ownerId };
}

function fleet(projectId: string, groups: FleetGroups = 'all', idPrefix = ''): Promise<FleetDevice[]> {
  return streamedFleet(store, projectId, { pageSize: 7, groups, idPrefix });
}

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_profiles_${randomUUID().slice(0, 8)}` });
  models = registerModels(mongo);
  await ensureIndexes(mongo);
  store = new MongoRegistryStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

it('follows every write a check decides on: registration, hardware, build, active, channel, groups and deletion', async () => {
  const { projectId, ownerId } = await project();
  const [kept, moved, gone] = ['kept', 'moved', 'gone'].map((name) => device(projectId, name, 'stable'));
  for (const one of [kept!, moved!, gone!]) expect(await store.registerDevice(one, ownerId, 0)).toMatchObject({ created: true });
  expect(await fleet(projectId)).toEqual(await fleetFromDocuments(store, projectId));

  // A check that reports other hardware, a confirm, an API change, a membership and a deletion.
  await store.checkIn({ projectId, deviceId: 'kept', reported: { framework: 'esp_idf', chipFamily: 'esp32c3', boardId: 'devkit', nvsSchemaVersion: 2 }, viaProjectToken: true, at: at(5) });
  expect(await store.applyStatusReport(kept!.id, { projectId, deviceId: 'kept', viaProjectToken: true, deploymentId: 'd1', rank: 4, change: { lastOtaStatus: 'confirmed', lastOtaReason: '', currentBuildNumber: 7 } })).toBe(true);
  await store.updateDevice(projectId, moved!.id, { active: false, channelId: 'beta' });
  const group = randomUUID();
  await store.insertGroup({ id: group, projectId, name: 'lab', createdAt: at(1) });
  await store.setMembership(projectId, moved!.id, group, true);
  expect(await store.deleteDevice(projectId, gone!.id, ownerId)).toBe(true);

  const devices = await fleet(projectId);
  expect(devices).toEqual(await fleetFromDocuments(store, projectId));
  expect(devices.map((one) => one.deviceId)).toEqual(expect.arrayContaining(['kept', 'moved']));
  expect(devices).toHaveLength(2);
  expect(devices.find((one) => one.deviceId === 'kept')).toMatchObject({ chipFamily: 'esp32c3', boardId: 'devkit', nvsSchemaVersion: 2, currentBuildNumber: 7 });
  expect(devices.find((one) => one.deviceId === 'moved')).toMatchObject({ active: false, channelId: 'beta', groupIds: [group] });
});

it('gives each device only its memberships of the groups asked for, and reads one part of the id space', async () => {
  const { projectId, ownerId } = await project();
  const [targeted, other] = [randomUUID(), randomUUID()];
  for (const [id, name] of [[targeted, 'targeted'], [other, 'other']] as const) await store.insertGroup({ id, projectId, name, createdAt: at(1) });
  const devices = Array.from({ length: 40 }, (_, index) => device(projectId, `unit-${index}`, 'stable'));
  for (const one of devices) await store.registerDevice(one, ownerId, 0);
  for (const one of devices.slice(0, 10)) await store.setMembership(projectId, one.id, targeted, true);
  for (const one of devices.slice(5, 20)) await store.setMembership(projectId, one.id, other, true);

  const asked = await fleet(projectId, [targeted]);
  expect(asked.filter((one) => one.groupIds.length > 0).map((one) => one.id).sort()).toEqual(devices.slice(0, 10).map((one) => one.id).sort());
  expect(asked.every((one) => one.groupIds.every((id) => id === targeted))).toBe(true);
  expect(await fleet(projectId, [])).toEqual(asked.map((one) => ({ ...one, groupIds: [] })));
  expect(await fleet(projectId, 'all')).toEqual(await fleetFromDocuments(store, projectId));

  // The parts of one hex digit add up to the whole, each holding only its own devices.
  const parts = await Promise.all([...'0123456789abcdef'].map((digit) => fleet(projectId, 'all', digit)));
  parts.forEach((part, index) => expect(part.every((one) => one.id.startsWith(index.toString(16)))).toBe(true));
  expect(parts.flat().sort((a, b) => a.id.localeCompare(b.id))).toEqual(await fleet(projectId, 'all'));
});

it('ends as the device documents are when checks, confirms and API changes of the same devices race', async () => {
  const { projectId, ownerId } = await project();
  const devices = Array.from({ length: 6 }, (_, index) => device(projectId, `racer-${index}`, 'stable'));
  for (const one of devices) await store.registerDevice(one, ownerId, 0);
  const chips = ['esp32', 'esp32c3', 'esp32s3'];
  // Each write of a round sets values of its own, so that a profile left stale by any round differs.
  const writesOf = (round: number) =>
    devices.flatMap((one, index) =>
      Array.from({ length: 8 }, (_, step) => {
        const value = round * 100 + step;
        switch ((index + step) % 3) {
          case 0:
            return (target: MongoRegistryStore) => target.checkIn({ projectId, deviceId: one.deviceId, reported: { framework: 'esp_idf', chipFamily: chips[step % 3]!, boardId: `board-${value}` }, viaProjectToken: true, at: at(10 + step) });
          case 1:
            return (target: MongoRegistryStore) => target.applyStatusReport(one.id, { projectId, deviceId: one.deviceId, viaProjectToken: true, deploymentId: `d${value}`, rank: 4, change: { lastOtaStatus: 'confirmed', lastOtaReason: '', currentBuildNumber: value } });
          default:
            return (target: MongoRegistryStore) => target.updateDevice(projectId, one.id, { active: step % 2 === 0, channelId: `channel-${value}` });
        }
      }),
    );
  // Two stores over one database, as two registry replicas are.
  const replica = new MongoRegistryStore(models);
  // A lost race shows in some rounds only: a few rounds make one likely to be caught.
  for (let round = 0; round < 8; round += 1) {
    await Promise.all(writesOf(round).map((write, index) => write(index % 2 === 0 ? store : replica)));
    expect(await fleet(projectId)).toEqual(await fleetFromDocuments(store, projectId));
  }
});

it('gives the devices stored before profiles theirs, once', async () => {
  const { projectId, ownerId } = await project();
  for (const name of ['early-1', 'early-2', 'early-3']) await store.registerDevice(device(projectId, name, 'stable'), ownerId, 0);
  await models.DeviceProfile.deleteMany({});
  await models.DataMigration.deleteOne({ _id: 'device_profiles' });
  expect(await fleet(projectId)).toEqual([]);

  await addDeviceProfiles(models);
  expect(await fleet(projectId)).toEqual(await fleetFromDocuments(store, projectId));
  expect(await models.DataMigration.exists({ _id: 'device_profiles' })).toBeTruthy();
});

it('gives the profiles stored before counts read their finer buckets the key of one, once', async () => {
  const { projectId, ownerId } = await project();
  const names = ['older-1', 'older-2', 'older-3'];
  for (const name of names) await store.registerDevice(device(projectId, name, 'stable'), ownerId, 0);
  const ids = (await store.listDevices(projectId, {})).map((one) => one.id);
  await models.DeviceProfile.updateMany({ _id: { $in: ids } }, { $unset: { k3: '' } });
  await models.DataMigration.deleteOne({ _id: 'device_profile_count_keys' });
  const keys = async () => (await models.DeviceProfile.find({ _id: { $in: ids } }).lean()).map((doc) => [doc._id, doc.k3]).sort();

  await addProfileCountKeys(models);
  expect(await keys()).toEqual(ids.map((id) => [id, profileKeysOf(projectId, id).k3]).sort());
  expect(await models.DataMigration.exists({ _id: 'device_profile_count_keys' })).toBeTruthy();
});
