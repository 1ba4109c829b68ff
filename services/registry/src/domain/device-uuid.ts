import { uuidV5In } from '@ota/ids';

// The namespace of device UUIDs is a fixed random UUID.
const inDeviceNamespace = uuidV5In('6f1b2d6e-4c3a-4b8f-9e0d-1c2b3a495867');

/**
 * A device's UUID, derived from its project and its own device_id (UUIDv5). A device check names
 * the device by device_id; deriving the key means the check finds the record by primary key, the
 * cheapest lookup there is (docs/architecture.md, "Where the data-access rules come from").
 */
export function deviceUuid(projectId: string, deviceId: string): string {
  // The project id's length first, so that no two (project, device) pairs make the same name.
  return inDeviceNamespace(`${projectId.length}:${projectId}${deviceId}`);
}
