import { createHash } from 'node:crypto';
import { uuidV5In } from './uuid-v5';

const uuidV5 = (namespace: string, name: string) => uuidV5In(namespace)(name);

test('matches the RFC 9562 example: the DNS namespace and www.example.com', () => {
  // RFC 9562, appendix A.4.
  expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
});

test('is a lowercase version-5 UUID of the RFC variant, different for another name or namespace', () => {
  const id = uuidV5('6f1b2d6e-4c3a-4b8f-9e0d-1c2b3a495867', 'a');
  expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(uuidV5('6f1b2d6e-4c3a-4b8f-9e0d-1c2b3a495867', 'b')).not.toBe(id);
  expect(uuidV5('3d0c8f5a-9b7e-4e21-a6f4-c2d9e8b17a50', 'a')).not.toBe(id);
});

test('derives each name alone, whatever the names derived before it: short after long, and beyond 256 bytes', () => {
  const namespace = '6f1b2d6e-4c3a-4b8f-9e0d-1c2b3a495867';
  // The RFC's construction, spelled out with a hash object per id.
  const reference = (name: string) => {
    const digest = createHash('sha1').update(Buffer.from(namespace.replaceAll('-', ''), 'hex')).update(name).digest();
    digest[6] = (digest[6]! & 0x0f) | 0x50;
    digest[8] = (digest[8]! & 0x3f) | 0x80;
    const hex = digest.toString('hex', 0, 16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
  const derive = uuidV5In(namespace);
  for (const name of ['a long device name, longer than the next', 'short', 'é'.repeat(200), '设备'.repeat(150), 'x', '']) expect(derive(name)).toBe(reference(name));
});
