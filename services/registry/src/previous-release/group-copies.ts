// PREVIOUS RELEASE: deleted by the next release (docs/architecture.md, "What the next release
// deletes"). The releases before kept a copy of each device's groups on its document
// (`group_ids`) and read it; this one reads the memberships alone and leaves the copy as it was.
// Before a rollback to such a release, the copies are written again from the memberships
// (docs/operations.md, "Upgrades and rollbacks").
import { collectionOf, updateEachById, type UpdateById } from '@ota/mongo';
import type { DeviceDoc, RegistryModels } from '../adapters/mongo/models';

/** Copies written in one command (updateEachById). */
const WRITES_PER_COMMAND = 250;

/**
 * Writes each device's groups, as its memberships say, onto the device where its copy differs, and
 * answers how many devices it wrote. The memberships are read whole first (a million take about
 * 100 MB here), then the devices one after another with their copies alone.
 */
export async function writeGroupCopies(models: RegistryModels): Promise<{ devices: number; written: number }> {
  const groupsOf = new Map<string, string[]>();
  for await (const { device_id, group_id } of collectionOf(models.Membership).find({}, { projection: { device_id: 1, group_id: 1 } })) {
    groupsOf.set(device_id, [...(groupsOf.get(device_id) ?? []), group_id]);
  }
  let devices = 0;
  let written = 0;
  let batch: Array<UpdateById<DeviceDoc>> = [];
  const flush = async () => {
    if (batch.length > 0) written += (await updateEachById(collectionOf(models.Device), batch)).modifiedCount;
    batch = [];
  };
  for await (const doc of collectionOf(models.Device).find({}, { projection: { group_ids: 1 } })) {
    devices += 1;
    const groups = (groupsOf.get(doc._id) ?? []).sort();
    if (JSON.stringify([...(doc.group_ids ?? [])].sort()) === JSON.stringify(groups)) continue;
    batch.push({ _id: doc._id, update: { $set: { group_ids: groups } } });
    if (batch.length === WRITES_PER_COMMAND) await flush();
  }
  await flush();
  return { devices, written };
}
