import { createHash } from 'node:crypto';

/**
 * A version-5 UUID (RFC 9562): the SHA-1 of a namespace UUID and a name. Every process that
 * derives the id of the same name gets the same id, so it can find a record by primary key, or
 * store a repeated event once, without asking anyone.
 */
export function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replaceAll('-', ''), 'hex')).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
