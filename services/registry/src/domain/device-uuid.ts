import { createHash } from 'node:crypto';

// The namespace of device UUIDs (a fixed random UUID), for UUIDv5 per RFC 9562.
const NAMESPACE = Buffer.from('6f1b2d6e4c3a4b8f9e0d1c2b3a495867', 'hex');

/**
 * A device's UUID, derived from its project and its own device_id (UUIDv5). A device check names
 * the device by device_id; deriving the key means the check finds the record by primary key, the
 * cheapest lookup there is (docs/architecture.md, "Where the data-access rules come from").
 */
export function deviceUuid(projectId: string, deviceId: string): string {
  // The project id's length first, so that no two (project, device) pairs make the same name.
  const hash = createHash('sha1').update(NAMESPACE).update(`${projectId.length}:${projectId}${deviceId}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
