import type { Readable } from 'node:stream';
import { invalidArgument } from '@ota/errors';
import type { BinaryStorage } from './ports';

/**
 * `length` bytes from `offset` of a stored object of `size` bytes (0: to its end), read from
 * object storage as a range so that a resumed download costs only what it still needs; `what`
 * names the object in a refusal.
 */
export function readRange(storage: BinaryStorage, key: string, size: number, offset: number, length: number, what: string): Promise<Readable> {
  if (offset < 0 || length < 0) throw invalidArgument('offset and length cannot be negative');
  if (offset === 0 && (length === 0 || length >= size)) return storage.get(key);
  if (offset >= size) throw invalidArgument(`offset ${offset} is past the end of the ${size}-byte ${what}`);
  const end = length === 0 ? size - 1 : Math.min(offset + length, size) - 1;
  return storage.get(key, { start: offset, end });
}
