import { devicePageKeys } from '@ota/ids';
import { encodeCheckEntry } from './check-history';
import type { CheckHistoryEntry, RegistryModels } from './models';

/** A decision record as the `check_events` collection held it, one document per slot, before the history moved onto the device. */
interface LegacyCheckEventDoc extends CheckHistoryEntry {
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
    await models.Device.collection.updateOne({ _id: device_uuid, [path]: { $exists: false } } as never, { $set: { [path]: encodeCheckEntry(entry) } });
  }
  await legacy.drop();
}

/**
 * Gives every device stored before page buckets existed its page keys (device-buckets.ts): a device
 * list reads by them, and would not see such a device. Writes in batches; safe to run again (a
 * device that has its keys is not read twice).
 */
export async function addDevicePageKeys(models: RegistryModels): Promise<void> {
  // Done once: finding the devices without keys reads every device (FerretDB cannot use an index
  // for $exists), which a registry starting in a large project should not repeat.
  const done = models.DataMigration;
  if (await done.exists({ _id: 'device_page_keys' })) return;
  const BATCH = 1000;
  const missing = models.Device.collection.find({ page_keys: { $exists: false } } as never, { projection: { _id: 1, project_id: 1 } });
  let batch: Array<{ _id: string; project_id: string }> = [];
  const write = async () => {
    if (batch.length === 0) return;
    await models.Device.collection.bulkWrite(
      batch.map((doc) => ({ updateOne: { filter: { _id: doc._id } as never, update: { $set: { page_keys: devicePageKeys(doc.project_id, doc._id) } } } })),
      { ordered: false },
    );
    batch = [];
  };
  for await (const doc of missing) {
    batch.push(doc as unknown as { _id: string; project_id: string });
    if (batch.length === BATCH) await write();
  }
  await write();
  await done.updateOne({ _id: 'device_page_keys' }, { $set: { at: new Date() } }, { upsert: true }).exec();
}
