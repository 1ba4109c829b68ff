import type { MongoRegistryStore } from '../src/adapters/mongo/mongo-registry-store';
import type { FleetDevice, FleetGroups } from '../src/domain/model';

// The fleet two ways, to compare: as a preview streams it from registry, and as the device
// documents say it is. Each sorted by UUID, each device's groups sorted.

/** The project's fleet as a preview reads it (`streamFleet`): every bucket, or those of `idPrefix`. */
export async function streamedFleet(store: MongoRegistryStore, projectId: string, options: { pageSize: number; groups?: FleetGroups; idPrefix?: string }): Promise<FleetDevice[]> {
  const devices: FleetDevice[] = [];
  for await (const page of store.streamFleet(projectId, options.pageSize, options.idPrefix ?? '', options.groups ?? 'all')) devices.push(...page);
  return devices.map((one) => ({ ...one, groupIds: [...one.groupIds].sort() })).sort((a, b) => a.id.localeCompare(b.id));
}

/** The fleet as the device documents say it is. */
export async function fleetFromDocuments(store: MongoRegistryStore, projectId: string): Promise<FleetDevice[]> {
  const devices = await store.listDevices(projectId, {});
  return devices
    .map((one) => ({
      id: one.id,
      deviceId: one.deviceId,
      active: one.active,
      channelId: one.channelId,
      groupIds: [...one.groupIds].sort(),
      currentBuildNumber: one.currentBuildNumber,
      framework: one.framework,
      chipFamily: one.chipFamily,
      boardId: one.boardId,
      hardwareRevision: one.hardwareRevision,
      partitionProfile: one.partitionProfile,
      nvsSchemaVersion: one.nvsSchemaVersion,
      securityMode: one.securityMode,
      chipRevision: one.chipRevision,
      secureVersion: one.secureVersion,
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}
