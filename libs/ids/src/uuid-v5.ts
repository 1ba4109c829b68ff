import { createHash } from 'node:crypto';

/**
 * Version-5 UUIDs (RFC 9562) in one namespace: the SHA-1 of the namespace UUID and a name. Every
 * process that derives the id of the same name gets the same id, so it can find a record by
 * primary key, or store a repeated event once, without asking anyone. The namespace is parsed
 * once, here, not on every call: device UUIDs are derived on every device check.
 */
export function uuidV5In(namespace: string): (name: string) => string {
  const namespaceBytes = Buffer.from(namespace.replaceAll('-', ''), 'hex');
  return (name) => {
    const hash = createHash('sha1').update(namespaceBytes).update(name).digest();
    hash[6] = (hash[6]! & 0x0f) | 0x50;
    hash[8] = (hash[8]! & 0x3f) | 0x80;
    const hex = hash.subarray(0, 16).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}
