import { hash } from 'node:crypto';

/**
 * Version-5 UUIDs (RFC 9562) in one namespace: the SHA-1 of the namespace UUID and a name. Every
 * process that derives the id of the same name gets the same id, so it can find a record by
 * primary key, or store a repeated event once, without asking anyone. The namespace is parsed
 * once, here, not on every call: device UUIDs are derived on every device check, so the name is
 * written after the namespace into one buffer kept for it, and hashed in one call, with no hash
 * object made per id.
 */
export function uuidV5In(namespace: string): (name: string) => string {
  const namespaceBytes = Buffer.from(namespace.replaceAll('-', ''), 'hex');
  let input = Buffer.alloc(256);
  namespaceBytes.copy(input);
  return (name) => {
    // UTF-8 takes at most three bytes for each UTF-16 unit of the name.
    if (namespaceBytes.length + name.length * 3 > input.length) {
      input = Buffer.alloc(namespaceBytes.length + name.length * 3);
      namespaceBytes.copy(input);
    }
    const length = namespaceBytes.length + input.write(name, namespaceBytes.length);
    const digest = hash('sha1', input.subarray(0, length), 'buffer');
    digest[6] = (digest[6]! & 0x0f) | 0x50;
    digest[8] = (digest[8]! & 0x3f) | 0x80;
    const hex = digest.toString('hex', 0, 16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}
