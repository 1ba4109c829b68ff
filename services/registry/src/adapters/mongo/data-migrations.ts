import type { CheckHistoryEntry, RegistryModels } from './models';

/** A decision record as the `check_events` collection held it, one document per slot, before the history moved onto the device. */
interface LegacyCheckEventDoc extends CheckHistoryEntry {
  _id: string;
  device_uuid: string;
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
    const { _id, device_uuid, ...entry } = doc;
    const path = `check_history.s${slot}`;
    await models.Device.collection.updateOne({ _id: device_uuid, [path]: { $exists: false } } as never, { $set: { [path]: entryOf(entry) } });
  }
  await legacy.drop();
}

function entryOf(doc: Omit<LegacyCheckEventDoc, '_id' | 'device_uuid'> & Record<string, unknown>): CheckHistoryEntry {
  return {
    seq: doc.seq,
    id: doc.id,
    created_at: doc.created_at,
    decision: doc.decision,
    status: doc.status,
    deployment_id: doc.deployment_id,
    artifact_build_number: doc.artifact_build_number ?? null,
    reported_build_number: doc.reported_build_number ?? null,
    reported_version: doc.reported_version ?? '',
    message: doc.message ?? '',
  };
}
