import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { makeCoreDump, makeEspBuild } from '@ota/testkit';
import { InvalidCoreDump, readCoreDump, reasonOf } from './core-dump';

// What the service reads of a dump by itself, from dumps laid out as ESP-IDF writes them
// (libs/testkit/src/esp-core-dumps.ts) and from hostile variants of them.

const elf = () => makeEspBuild({ crashCode: true, version: '9.9.9' }).elf;

/** The ELF core file of a version 1.2 dump, changed by `edit`, wrapped again with a right CRC-32. */
function withCore(dump: Buffer, edit: (core: Buffer) => Buffer): Buffer {
  const core = edit(Buffer.from(dump.subarray(24, dump.length - 4)));
  const header = Buffer.from(dump.subarray(0, 24));
  header.writeUInt32LE(24 + core.length + 4, 0);
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32LE(crc32(Buffer.concat([header, core])) >>> 0);
  return Buffer.concat([header, core, checksum]);
}

describe('readCoreDump', () => {
  it('reads the chip, the ELF digest, the crashed task and the exception of a version 1.2 dump', () => {
    const app = elf();
    const dump = readCoreDump(makeCoreDump({ elf: app, mcause: 7 }));
    expect(dump).toMatchObject({ formatVersion: '1.2', format: 'elf', chip: 'esp32c3', chipRevision: 3, architecture: 'riscv', panicDetails: '', exceptionCause: 7, reason: 'store_access_fault', inInterrupt: false });
    expect(dump.elfSha256Prefix).toBe(createHash('sha256').update(app).digest('hex').slice(0, 9));
    expect(dump.pc).toBeGreaterThan(0x42000000);
  });

  it('reads a version 1.4 dump (SHA-256) and an abort\'s message', () => {
    const dump = readCoreDump(makeCoreDump({ elf: elf(), checksum: 'sha256', chipId: 13, chipRevision: 1, elfShaDigits: 16, panicDetails: 'assert failed: app_main main.c:12 (x > 0)' }));
    expect(dump).toMatchObject({ formatVersion: '1.4', chip: 'esp32c6', chipRevision: 1, reason: 'assert', panicDetails: 'assert failed: app_main main.c:12 (x > 0)' });
    expect(dump.elfSha256Prefix).toHaveLength(16);
  });

  it('reads the chip of a dump in the older binary format, and no more', () => {
    // Version 0.3: total length, version, task count, TCB size, segment count, chip revision; a CRC-32.
    const header = Buffer.alloc(24);
    header.writeUInt32LE(24 + 8 + 4, 0);
    header.writeUInt32LE((9 << 16) | 0x0003, 4);
    const body = Buffer.concat([header, Buffer.alloc(8)]);
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32LE(crc32(body) >>> 0);
    expect(readCoreDump(Buffer.concat([body, checksum]))).toMatchObject({ format: 'binary', formatVersion: '0.3', chip: 'esp32s3', architecture: 'xtensa', coreElf: null, reason: 'unknown' });
  });

  const refusals: Array<[string, () => Buffer, RegExp]> = [
    ['fewer bytes than a header', () => Buffer.alloc(8), /too few/],
    ['an unknown version', () => Buffer.from(makeCoreDump({ elf: elf() })).fill(0x77, 4, 6), /unknown format version/],
    ['an unknown chip', () => makeCoreDump({ elf: elf(), chipId: 77 }), /names chip 77/],
    ['trailing bytes', () => Buffer.concat([makeCoreDump({ elf: elf() }), Buffer.alloc(3)]), /trailing bytes/],
    ['a wrong SHA-256', () => {
      const dump = makeCoreDump({ elf: elf(), checksum: 'sha256' });
      dump[dump.length - 1]! ^= 1;
      return dump;
    }, /SHA-256 does not match/],
    ['no ELF inside', () => withCore(makeCoreDump({ elf: elf() }), (core) => core.fill(0, 0, 4)), /holds no ELF/],
    ['a 64-bit ELF', () => withCore(makeCoreDump({ elf: elf() }), (core) => core.fill(2, 4, 5)), /32-bit little-endian/],
    ['an executable, not a core file', () => withCore(makeCoreDump({ elf: elf() }), (core) => (core.writeUInt16LE(2, 16), core)), /not a core file/],
    ['another machine than the chip', () => withCore(makeCoreDump({ elf: elf() }), (core) => (core.writeUInt16LE(94, 18), core)), /machine \(94\)/],
    ['65,535 program headers', () => withCore(makeCoreDump({ elf: elf() }), (core) => (core.writeUInt16LE(0xffff, 44), core)), /program headers do not fit/],
    ['a segment past the end', () => withCore(makeCoreDump({ elf: elf() }), (core) => (core.writeUInt32LE(0xfffffff0, 52 + 4), core)), /runs past the end/],
    ['a note past its segment', () => withCore(makeCoreDump({ elf: elf() }), (core) => {
      // The first note's descsz, in the first (note) segment, made larger than the segment.
      const notes = core.readUInt32LE(52 + 4);
      core.writeUInt32LE(0x10000, notes + 4);
      return core;
    }), /runs past its segment/],
  ];
  it.each(refusals)('refuses %s', (_what, make, message) => {
    expect(() => readCoreDump(make())).toThrow(InvalidCoreDump);
    expect(() => readCoreDump(make())).toThrow(message);
  });
});

describe('reasonOf', () => {
  it.each([
    ['abort() was called at PC 0x42009351 on core 0', null, 'abort'],
    ['***ERROR*** A stack overflow in task sensor has been detected.', null, 'stack_overflow'],
    ['Stack protection fault', null, 'stack_overflow'],
    ['Task watchdog got triggered.', null, 'watchdog'],
    ['something else', null, 'panic'],
    ['', 2, 'illegal_instruction'],
    ['', 0x80000007, 'interrupt'],
    ['', 42, 'unknown'],
    ['', null, 'unknown'],
  ] as const)('%j with cause %j is %s', (details, cause, reason) => {
    expect(reasonOf(details, cause)).toBe(reason);
  });
});
