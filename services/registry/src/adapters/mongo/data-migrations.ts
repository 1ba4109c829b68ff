import { devicePageKeys } from '@ota/ids';
import { addPageKeysOnce, collectionOf } from '@ota/mongo';
import { encodeDecisionRecordEntry } from './decision-record-entry';
import { writeEveryProfile } from './device-profiles';
import { profileKeysOf } from './profile-buckets';
import type { DecisionRecordEntry, RegistryModels } from './models';

/** A decision record as the `check_events` collection held it, one document per slot, before the history moved onto the device. */
interface LegacyCheckEventDoc extends DecisionRecordEntry {
  _id: string;
  project_id: string;
  device_uuid: string;
  device_id: string;
}

/**
 * Moves each device's decision history from the former `check_events` collection (`_id`
 * `<device>:<slot>`) into the device document's `check_history.s<slot>`, then drops the
 * collection. Safe to run again: a slot already on the device is kept, and a run interrupted
 * before the drop repeats the copy.
 */
export async function moveCheckEventsOntoDevices(models: RegistryModels): Promise<void> {
  const database = models.Device.db.db;
  if (!database) return;
  const exists = (await database.listCollections({ name: 'check_events' }, { nameOnly: true }).toArray()).length > 0;
  if (!exists) return;
  const legacy = database.collection<LegacyCheckEventDoc>('check_events');
  for await (const doc of legacy.find()) {
    const slot = doc._id.slice(doc._id.lastIndexOf(':') + 1);
    // The device already holds the project and device_id; the rest is the history entry as it was.
    const { _id, project_id: _project, device_uuid, device_id: _deviceId, ...entry } = doc;
    const path = `check_history.s${slot}`;
    await collectionOf(models.Device).updateOne({ _id: device_uuid, [path]: { $exists: false } }, { $set: { [path]: encodeDecisionRecordEntry(entry) } });
  }
  await legacy.drop();
}

/**
 * Gives every device stored before page buckets existed its page keys (device-buckets.ts): a device
 * list reads by them, and would not see such a device.
 */
export async function addDevicePageKeys(models: RegistryModels): Promise<void> {
  await addPageKeys(models, 'device_page_keys', models.Device.collection, (doc) => doc._id);
}

/**
 * Gives every membership stored before bulk changes read them by bucket the page keys of its
 * device: a bulk change would not see such a membership when it checks the group's members.
 */
export async function addMembershipPageKeys(models: RegistryModels): Promise<void> {
  await addPageKeys(models, 'membership_page_keys', models.Membership.collection, (doc) => doc.device_id);
}

/**
 * Gives every membership stored before a group's members were read by one key its device's page
 * buckets within the group (models.ts, `group_keys`): a bulk change would not see it otherwise.
 * Then drops the index of the group and the project's buckets, which nothing reads since (the
 * release before creates it again on a rollback).
 */
export async function addMembershipGroupKeys(models: RegistryModels): Promise<void> {
  await addPageKeysOnce<{ _id: string; group_id: string; device_id: string }>({
    done: models.DataMigration,
    name: 'membership_group_keys',
    collection: models.Membership.collection as never,
    missing: { group_keys: { $exists: false } },
    field: 'group_keys',
    fields: { group_id: 1, device_id: 1 },
    keysOf: (doc) => devicePageKeys(doc.group_id, doc.device_id),
  });
  await models.Membership.collection.dropIndex('group_id_1_page_keys_1').catch((error: { codeName?: string }) => {
    if (error.codeName !== 'IndexNotFound') throw error;
  });
}

/**
 * Gives every device stored before device profiles existed its profile (device-profiles.ts): a
 * preview reads the fleet from them, and would not see such a device. Once: a later run would
 * only write the profiles again. Answers whether it ran.
 */
export async function addDeviceProfiles(models: RegistryModels): Promise<boolean> {
  const name = 'device_profiles';
  if (await models.DataMigration.exists({ _id: name })) return false;
  await writeEveryProfile(models);
  await models.DataMigration.updateOne({ _id: name }, { $set: { at: new Date() } }, { upsert: true }).exec();
  return true;
}

/**
 * Gives every profile written before counts read the profiles' finer buckets its key of three hex
 * digits (`k3`, device-profiles.ts): a count would not sample such a device. Once, as a
 * page keys' migration: finding them reads every profile. Answers whether it ran.
 */
export function addProfileCountKeys(models: RegistryModels): Promise<boolean> {
  return addPageKeysOnce<{ _id: string; k: string }>({
    done: models.DataMigration,
    name: 'device_profile_count_keys',
    collection: models.DeviceProfile.collection as never,
    missing: { k3: { $exists: false } },
    field: 'k3',
    fields: { k: 1 },
    // `k` is the project's key of the coarser bucket: the project is what comes before its last '/'.
    keysOf: (doc) => profileKeysOf(doc.k.slice(0, doc.k.lastIndexOf('/')), doc._id).k3,
  });
}

/**
 * Deletes every profile pack and change (profile-packs.ts), once, and whenever `profilesRewritten`
 * (a profile migration above ran in this start): a profile written by a release before packs, or
 * by a migration, has no change, so a pack made before would show it as packed. Nothing is lost:
 * a bucket without a pack is read whole, and packed again by the previews after.
 */
export async function resetProfilePacks(models: RegistryModels, profilesRewritten: boolean): Promise<void> {
  const name = 'device_profile_packs';
  if (!profilesRewritten && (await models.DataMigration.exists({ _id: name }))) return;
  // In the order drop() in profile-packs.ts keeps: the records, the packs, then their changes.
  await models.PackedProject.deleteMany({});
  await models.ProfilePack.deleteMany({});
  await models.ProfileChange.deleteMany({});
  await models.DataMigration.updateOne({ _id: name }, { $set: { at: new Date() } }, { upsert: true }).exec();
}

/** The profiles' migrations, in order: each profile as its device is, with both its keys, and no pack from before. */
export async function migrateDeviceProfiles(models: RegistryModels): Promise<void> {
  const written = await addDeviceProfiles(models);
  const keyed = await addProfileCountKeys(models);
  await resetProfilePacks(models, written || keyed);
}

interface KeyedDoc {
  _id: string;
  project_id: string;
  device_id?: string;
}

/** Page keys on every document of `collection` stored without them, from its project and the device UUID `deviceOf` names. */
function addPageKeys(models: RegistryModels, name: string, collection: typeof models.Device.collection, deviceOf: (doc: KeyedDoc) => string | undefined): Promise<boolean> {
  return addPageKeysOnce<KeyedDoc>({
    done: models.DataMigration,
    name,
    collection: collection as never,
    missing: { page_keys: { $exists: false } },
    fields: { project_id: 1, device_id: 1 },
    keysOf: (doc) => devicePageKeys(doc.project_id, deviceOf(doc) ?? ''),
  });
}
