import { randomBytes } from 'node:crypto';
import { isDomainError } from '@ota/errors';
import { imageFields } from './esp-image';
import { esptoolImageInfo, makeEspImage, seededRandom, type EspImageOptions } from '@ota/testkit';
import { EspImageReader } from './esp-image-reader';

/** Reads the bytes in pieces of `pieceBytes` (the last may be shorter), as an upload streams them. */
function read(bytes: Buffer, pieceBytes = 65_536) {
  const reader = new EspImageReader();
  for (let at = 0; at < bytes.length; at += pieceBytes) reader.update(bytes.subarray(at, at + pieceBytes));
  return reader.finish();
}

function refusal(bytes: Buffer): string {
  try {
    read(bytes);
  } catch (error) {
    if (isDomainError(error, 'InvalidArgument')) return error.message;
    throw error;
  }
  throw new Error('the reader accepted the bytes');
}

describe('EspImageReader against esptool', () => {
  const cases: Array<[string, EspImageOptions]> = [
    ['the defaults (v0.3 to v1.99, a SHA-256 appended)', {}],
    ['a secure version, a revision range and eFuse block revisions', { secureVersion: 7, minChipRevision: 101, maxChipRevision: 150, minEfuseBlockRevision: 1, maxEfuseBlockRevision: 99 }],
    ['no appended SHA-256 and no upper chip revision', { appendHash: false, maxChipRevision: 65535, minChipRevision: 0 }],
    ['texts that fill their fields', { version: 'v'.padEnd(32, '9'), projectName: 'p'.padEnd(31, 'x'), idfVersion: 'v5.5.5-dirty-g0123456789abcdef' }],
    ['a larger image', { tableBytes: 200_000, secureVersion: 2 }],
  ];

  it.each(cases)('reads what esptool image-info prints: %s', (_name, options) => {
    const bytes = makeEspImage(options);
    const expected = esptoolImageInfo(bytes);
    for (const pieceBytes of [bytes.length, 65_536, 7, 1]) {
      const image = read(bytes, pieceBytes);
      expect(image && imageFields(image)).toEqual(expected);
    }
  });
});

describe('EspImageReader on other bytes', () => {
  it('answers null for a binary that does not start with 0xE9, and for none', () => {
    const bytes = randomBytes(10_000);
    bytes[0] = 0x7f;
    expect(read(bytes)).toBeNull();
    expect(read(Buffer.alloc(0))).toBeNull();
  });
});

describe('EspImageReader refusals', () => {
  const image = () => Buffer.from(makeEspImage());
  const unhashed = () => Buffer.from(makeEspImage({ appendHash: false }));
  // The first segment's header sits after the 24-byte image header; its data after that.
  const FIRST_SEGMENT_DATA = 32;

  it('refuses a truncated header', () => {
    expect(refusal(image().subarray(0, 10))).toMatch(/header is cut short: 10 of its 24 bytes/);
  });

  it('refuses 255 segments, and 0', () => {
    const many = image();
    many[1] = 255;
    expect(refusal(many)).toMatch(/declares 255 segments; ESP-IDF's bootloader loads 1 to 16/);
    const none = image();
    none[1] = 0;
    expect(refusal(none)).toMatch(/declares 0 segments/);
  });

  it('refuses a segment whose length runs past the end of the file', () => {
    const long = image();
    long.writeUInt32LE(0x00fff000, 28);
    expect(refusal(long)).toMatch(/ends inside segment 0 of 5/);
    expect(refusal(image().subarray(0, 5000))).toMatch(/ends inside segment/);
  });

  it('refuses a segment length that is not a multiple of 4, or larger than any flash', () => {
    const odd = image();
    odd.writeUInt32LE(0x22e, 28);
    expect(refusal(odd)).toMatch(/length of 558 bytes, not a multiple of 4/);
    const huge = image();
    huge.writeUInt32LE(0xfffffff0, 28);
    expect(refusal(huge)).toMatch(/more than a flash chip holds/);
  });

  it('refuses a checksum that does not match the segments', () => {
    const bytes = unhashed();
    bytes[FIRST_SEGMENT_DATA + 300]! ^= 0x5a;
    expect(refusal(bytes)).toMatch(/checksum does not match/);
  });

  it('refuses an appended SHA-256 that does not match', () => {
    const bytes = image();
    bytes[bytes.length - 1]! ^= 0x01;
    expect(refusal(bytes)).toMatch(/appended SHA-256 does not match/);
    expect(refusal(image().subarray(0, image().length - 5))).toMatch(/5 bytes short/);
  });

  it('refuses an image whose first segment holds no app descriptor', () => {
    expect(refusal(makeEspImage({ descriptorMagic: 0x12345678 }))).toMatch(/holds no app descriptor .*found 0x12345678/);
  });

  it('refuses a chip id no ESP chip has', () => {
    const bytes = image();
    bytes.writeUInt16LE(77, 12);
    expect(refusal(bytes)).toMatch(/chip id 77/);
  });

  it('reads an image followed by more bytes (a signature block) as the image', () => {
    const bytes = Buffer.concat([image(), Buffer.alloc(4096, 0xff)]);
    expect(read(bytes)?.chip).toBe('esp32c3');
  });
});

describe('EspImageReader under mutation', () => {
  // Real images with bytes flipped, fields rewritten and ends cut: each is read whole or refused
  // with InvalidArgument, never another error; memory is the reader's fixed buffers.
  it('reads or refuses 3,000 mutated images', () => {
    const random = seededRandom(84);
    const sources = [makeEspImage(), makeEspImage({ appendHash: false, secureVersion: 4 })];
    const outcomes = { read: 0, refused: 0 };
    for (let round = 0; round < 3000; round++) {
      const bytes = Buffer.from(sources[round % sources.length]!);
      const mutations = 1 + Math.floor(random() * 4);
      for (let m = 0; m < mutations; m++) {
        const kind = random();
        // The headers and the descriptor are where a parser goes wrong: aim most flips there.
        const at = random() < 0.7 ? Math.floor(random() * 300) : Math.floor(random() * bytes.length);
        if (kind < 0.6) bytes[at] = Math.floor(random() * 256);
        else if (kind < 0.9) bytes.writeUInt32LE(Math.floor(random() * 2 ** 32), Math.min(at, bytes.length - 4));
        else bytes.fill(0xff, at);
      }
      const cut = random() < 0.2 ? bytes.subarray(0, Math.floor(random() * bytes.length)) : bytes;
      try {
        read(cut, 1 + Math.floor(random() * 4096));
        outcomes.read += 1;
      } catch (error) {
        if (!isDomainError(error, 'InvalidArgument')) throw error;
        outcomes.refused += 1;
      }
    }
    expect(outcomes.refused).toBeGreaterThan(2000);
    expect(outcomes.read + outcomes.refused).toBe(3000);
  });
});
