import { randomUUID } from 'node:crypto';
import { deviceUuid } from '@ota/ids';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { resetProfilePacks } from '../src/adapters/mongo/data-migrations';
import { profileDocOf, type ProfiledDoc } from '../src/adapters/mongo/device-profiles';
import { finerKeyOf, profileKeysOf } from '../src/adapters/mongo/profile-buckets';
import { registerModels, type RegistryModels } from '../src/adapters/mongo/models';
import { MongoRegistryStore } from '../src/adapters/mongo/mongo-registry-store';
import type { FleetDevice } from '../src/domain/model';
import { storedDevice } from './stored-device';
import { fleetFromDocuments, streamedFleet } from './fleet-as-read';

// A large project's preview reads its profiles from packs (profile-packs.ts), one document per
// finer bucket, which are a cache of the profiles. Whatever the writes, and whoever packs a bucket
// while they run, the fleet a preview reads is the fleet the device documents say, on the run's
// real FerretDB. A pack here is made at PACK_AT profiles of a bucket: three, not sixteen, so that
// a few dozen devices make several packs, and each changed device read one by one is taken into
// the pack's next version (a fourth of PACK_AT, at least one).

const PACK_AT = 3;
let mongo: Connection;
let models: RegistryModels;
let store: MongoRegistryStore;
let replica: MongoRegistryStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 11, 2, 12, 0, seconds));

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_packs_${randomUUID().slice(0, 8)}` });
  models = registerModels(mongo);
  await ensureIndexes(mongo);
  const options = { devicePageReadBudget: 500, countSample: 1_000, profilePackAt: PACK_AT };
  // Two stores over one database, as two registry replicas are.
  store = new MongoRegistryStore(models, options);
  replica = new MongoRegistryStore(models, options);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

async function project() {
  const projectId = randomUUID();
  const ownerId = randomUUID();
  await store.insertProject({ id: projectId, name: 'Packed', slug: `packed-${projectId.slice(0, 8)}`, ownerId, createdAt: at(0) });
  return { projectId, ownerId };
}

/** `count` device_ids whose UUIDs begin with `prefix` (two or three hex digits): devices of one bucket, or of one finer bucket. */
function namesIn(projectId: string, prefix: string, count: number, from = 0): string[] {
  const names: string[] = [];
  for (let index = from; names.length < count; index += 1) {
    if (deviceUuid(projectId, `unit-${index}`).startsWith(prefix)) names.push(`unit-${index}`);
  }
  return names;
}

async function register(projectId: string, ownerId: string, names: readonly string[]): Promise<void> {
  for (const name of names) await store.registerDevice(storedDevice(projectId, name, 'stable', at(0)), ownerId, 0);
}

/** The project's fleet as a preview reads it: every bucket, or those of `idPrefix`. */
function fleet(target: MongoRegistryStore, projectId: string, idPrefix = ''): Promise<FleetDevice[]> {
  return streamedFleet(target, projectId, { pageSize: 5, idPrefix });
}

/** The fleet as the device documents say it is. */
function truth(projectId: string): Promise<FleetDevice[]> {
  return fleetFromDocuments(store, projectId);
}

/** Every stored version of the project's packs. */
async function packsOf(projectId: string) {
  return models.ProfilePack.find({ k: { $regex: `^${projectId}/` } }).lean();
}

async function changesOf(projectId: string, k3Prefix = '') {
  return (await models.ProfileChange.find({ k: { $regex: `^${projectId}/` } }).lean()).filter((change) => change.i.startsWith(k3Prefix));
}

/** What breaks the packs' invariant: a device without a change not in its finer bucket's highest version as its profile is. */
async function packFaults(projectId: string): Promise<string[]> {
  const faults: string[] = [];
  const profiles = await models.DeviceProfile.find({ k: { $regex: `^${projectId}/` } }).lean();
  const changed = new Set((await changesOf(projectId)).map((change) => change.i));
  const packs = await packsOf(projectId);
  for (const pack of packs) {
    if (pack.ps === null || packs.some((other) => other.k3 === pack.k3 && other.v > pack.v)) continue;
    const entries = JSON.parse(pack.ps) as Record<string, unknown[]>;
    const own = profiles.filter((profile) => finerKeyOf(profile.k, profile._id) === pack.k3);
    for (const profile of own) {
      if (!changed.has(profile._id) && JSON.stringify(entries[profile._id]) !== profile.p) faults.push(`${profile._id}, unchanged, differs from pack ${pack._id}`);
    }
    for (const id of Object.keys(entries)) {
      if (!changed.has(id) && !own.some((profile) => profile._id === id)) faults.push(`pack ${pack._id} holds ${id}, which has neither a profile nor a change`);
    }
  }
  return faults;
}

it('packs the finer buckets large enough after two reads, and reads the same fleet from the packs', async () => {
  const { projectId, ownerId } = await project();
  // Two finer buckets of four devices, one of two (below PACK_AT), and three devices elsewhere.
  await register(projectId, ownerId, [...namesIn(projectId, '5a0', 4), ...namesIn(projectId, '5a7', 4), ...namesIn(projectId, '5ac', 2), ...namesIn(projectId, 'c', 3)]);
  const expected = await truth(projectId);
  expect(expected).toHaveLength(13);
  // A project without packs writes no changes.
  expect(await changesOf(projectId)).toEqual([]);
  expect(await models.PackedProject.exists({ _id: projectId })).toBeNull();

  // The first read records the project as packed and sets the two buckets waiting for packs; the
  // next read fills them.
  expect(await fleet(store, projectId)).toEqual(expected);
  expect(await models.PackedProject.exists({ _id: projectId })).not.toBeNull();
  expect((await packsOf(projectId)).map((pack) => [pack._id, pack.ps]).sort()).toEqual([
    [`${projectId}/5a0@0`, null],
    [`${projectId}/5a7@0`, null],
  ]);
  expect(await fleet(store, projectId)).toEqual(expected);
  const packs = await packsOf(projectId);
  expect(packs.map((pack) => [pack._id, Object.keys(JSON.parse(pack.ps!) as object).length]).sort()).toEqual([
    [`${projectId}/5a0@1`, 4],
    [`${projectId}/5a7@1`, 4],
  ]);
  expect(await fleet(store, projectId)).toEqual(expected);
  expect(await packFaults(projectId)).toEqual([]);
});

it('follows changes, registrations and deletions in a packed bucket, one by one and many at once', async () => {
  const { projectId, ownerId } = await project();
  const names = namesIn(projectId, '3e1', 6);
  await register(projectId, ownerId, names);
  await fleet(store, projectId);
  await fleet(store, projectId);
  const version = async () => (await packsOf(projectId)).map((pack) => pack.v);
  expect(await version()).toEqual([1]);
  const [first, second, gone, fourth] = names.map((name) => deviceUuid(projectId, name));

  // One change: read by the device's id, and taken into the next version.
  await store.updateDevice(projectId, first!, { channelId: 'beta' });
  expect(await changesOf(projectId)).toHaveLength(1);
  expect(await fleet(store, projectId)).toEqual(await truth(projectId));
  expect(await version()).toEqual([2]);
  expect(await changesOf(projectId)).toEqual([]);

  // A deletion takes the device out of the next version.
  expect(await store.deleteDevice(projectId, gone!, ownerId)).toBe(true);
  expect(await fleet(store, projectId)).toEqual(await truth(projectId));
  expect((await fleet(store, projectId)).map((one) => one.id)).not.toContain(gone);
  const afterDeletion = (await packsOf(projectId))[0]!;
  expect(afterDeletion.v).toBe(3);
  expect(Object.keys(JSON.parse(afterDeletion.ps!) as object)).not.toContain(gone);

  // PACK_AT changed devices at once: the bucket is read whole, and its pack made again from it.
  await store.checkIn({ projectId, deviceId: names[1]!, reported: { framework: 'esp_idf', chipFamily: 'esp32c3', boardId: 'devkit' }, viaProjectToken: true, at: at(5) });
  await store.applyStatusReport(fourth!, { projectId, deviceId: names[3]!, viaProjectToken: true, deploymentId: 'd1', rank: 4, change: { lastOtaStatus: 'confirmed', lastOtaReason: '', currentBuildNumber: 9 } });
  await register(projectId, ownerId, namesIn(projectId, '3e1', 1, 100_000));
  expect(await changesOf(projectId)).toHaveLength(3);
  expect(await fleet(store, projectId)).toEqual(await truth(projectId));
  expect(await changesOf(projectId)).toEqual([]);
  const remade = await packsOf(projectId);
  expect(remade.map((pack) => pack.v)).toEqual([4]);
  expect(Object.keys(JSON.parse(remade[0]!.ps!) as object)).toHaveLength(6);
  const devices = await fleet(store, projectId);
  expect(devices.find((one) => one.id === first)).toMatchObject({ channelId: 'beta' });
  expect(devices.find((one) => one.id === second)).toMatchObject({ chipFamily: 'esp32c3', boardId: 'devkit' });
  expect(devices.find((one) => one.id === fourth)).toMatchObject({ currentBuildNumber: 9 });
  expect(await packFaults(projectId)).toEqual([]);
});

it('reads the fleet as the documents are when writes and deletions race reads that pack, on two replicas', async () => {
  const { projectId, ownerId } = await project();
  // 40 devices over four finer buckets of one bucket, so that every read packs or repacks
  // something; the fleet is read from that bucket alone.
  const names = ['0', '1', '2', '3'].flatMap((digit) => namesIn(projectId, `9b${digit}`, 10));
  await register(projectId, ownerId, names);
  const chips = ['esp32', 'esp32c3', 'esp32s3'];
  // Every device writes in even rounds (its bucket is read whole and packed again), one in six in
  // odd rounds (their profiles are read one by one and taken into the next version).
  const writesOf = (round: number) =>
    names.filter((_, index) => round % 2 === 0 || index % 6 === round % 6).map((name) => {
      const index = names.indexOf(name);
      const id = deviceUuid(projectId, name);
      const value = round * 100 + index;
      const target = index % 2 === 0 ? store : replica;
      switch ((index + round) % 5) {
        case 0:
          return () => target.checkIn({ projectId, deviceId: name, reported: { framework: 'esp_idf', chipFamily: chips[value % 3]!, boardId: `board-${value}` }, viaProjectToken: true, at: at(10 + round) });
        case 1:
          return () => target.applyStatusReport(id, { projectId, deviceId: name, viaProjectToken: true, deploymentId: `d${value}`, rank: 4, change: { lastOtaStatus: 'confirmed', lastOtaReason: '', currentBuildNumber: value } });
        case 2:
          return () => target.updateDevice(projectId, id, { active: value % 2 === 0, channelId: `channel-${value}` });
        case 3:
          // A deletion, and the same device registered again: the same UUID, a new profile.
          return async () => {
            await target.deleteDevice(projectId, id, ownerId);
            if (round % 2 === 0) await target.registerDevice(storedDevice(projectId, name, `channel-${value}`, at(round)), ownerId, 0);
          };
        default:
          return () => fleet(target, projectId, '9b');
      }
    });
  // A lost race shows in some rounds only: several rounds make one likely to be caught.
  for (let round = 0; round < 10; round += 1) {
    const reads = [fleet(store, projectId, '9b'), fleet(replica, projectId, '9b')];
    await Promise.all([...writesOf(round).map((write) => write()), ...reads]);
    const expected = await truth(projectId);
    expect(await fleet(replica, projectId, '9b')).toEqual(expected);
    expect(await packFaults(projectId)).toEqual([]);
    expect(await fleet(store, projectId, '9b')).toEqual(expected);
  }
  // The reads did pack: what was compared above came from packs, not only from the profiles.
  expect((await packsOf(projectId)).filter((pack) => pack.ps !== null).length).toBeGreaterThan(0);
  expect(Math.max(...(await packsOf(projectId)).map((pack) => pack.v))).toBeGreaterThan(3);
});

it('drops the packs once, and again whenever a profile migration rewrote profiles, as after a release that writes no changes', async () => {
  const { projectId, ownerId } = await project();
  const names = namesIn(projectId, '71f', 4);
  await register(projectId, ownerId, names);
  await fleet(store, projectId);
  await fleet(store, projectId);
  expect((await packsOf(projectId))[0]?.ps).not.toBeNull();

  // A replica of the release before writes a profile as it did: with no change.
  const id = deviceUuid(projectId, names[0]!);
  await models.Device.updateOne({ _id: id }, { $set: { channel_id: 'from-before' } });
  const doc = (await models.Device.findById(id).lean()) as ProfiledDoc;
  await models.DeviceProfile.updateOne({ _id: id }, { $set: { p: profileDocOf(doc).p } });
  // The pack still shows it as packed: what the record's removal after an upgrade is for.
  expect((await fleet(store, projectId)).find((one) => one.id === id)?.channelId).toBe('stable');

  await models.DataMigration.deleteOne({ _id: 'device_profile_packs' });
  await resetProfilePacks(models, false);
  expect(await packsOf(projectId)).toEqual([]);
  expect(await fleet(store, projectId)).toEqual(await truth(projectId));
  // Once recorded, a start without a profile migration keeps the packs; one with drops them.
  await fleet(store, projectId);
  expect(await packsOf(projectId)).toHaveLength(1);
  await resetProfilePacks(models, false);
  expect(await packsOf(projectId)).toHaveLength(1);
  await resetProfilePacks(models, true);
  expect(await packsOf(projectId)).toEqual([]);
  expect(profileKeysOf(projectId, id).k3).toBe(`${projectId}/71f`);
});

it("deletes a project's packs with the project", async () => {
  const { projectId, ownerId } = await project();
  await register(projectId, ownerId, namesIn(projectId, '2d4', 3));
  await fleet(store, projectId);
  await fleet(store, projectId);
  expect(await packsOf(projectId)).toHaveLength(1);
  await store.deleteProject((await store.findProject(projectId))!);
  expect(await packsOf(projectId)).toEqual([]);
  expect(await changesOf(projectId)).toEqual([]);
  expect(await models.DeviceProfile.countDocuments({ k: `${projectId}/2d` })).toBe(0);
});
