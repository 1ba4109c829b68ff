import { uuidV5In } from './uuid-v5';

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

/**
 * How many levels of page buckets a device belongs to: at level L, the devices of a project whose
 * UUID begins with the same L hex digits (16, 256 and 4,096 buckets). A UUID is a hash, so every
 * bucket of a level holds about as many devices as another.
 */
export const DEVICE_PAGE_LEVELS = 3;

/** The key of the bucket at level `prefix.length` that holds the devices whose UUID begins with `prefix`. */
export function devicePageKey(projectId: string, prefix: string): string {
  return `${projectId}/${prefix}`;
}

/**
 * The page buckets a device is in, one per level: a device list reads a page one bucket at a
 * time by equality, the one filter every store we run on answers from an index (FerretDB v1
 * pushes neither ranges, sorts nor limits down to PostgreSQL when a query has a filter).
 */
export function devicePageKeys(projectId: string, id: string): string[] {
  const keys: string[] = [];
  for (let level = 1; level <= DEVICE_PAGE_LEVELS; level += 1) keys.push(devicePageKey(projectId, id.slice(0, level)));
  return keys;
}
