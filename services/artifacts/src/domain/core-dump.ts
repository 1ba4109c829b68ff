import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * What the service reads of an ESP-IDF core dump by itself, before any debugger sees it
 * (docs/api.md, "Core dumps"): the flash image ESP-IDF writes after a panic is a header (total
 * length, version with the chip in its high half), the dump, and a checksum over both. In the ELF
 * format (ESP-IDF's default) the dump is an ELF core file: the tasks' registers in `CORE` notes
 * (an ELF prstatus each, its pid the task's TCB address), their TCBs and stacks as loadable
 * segments, and ESP-IDF's notes: `ESP_CORE_DUMP_INFO` (the first hex digits of the app ELF's
 * SHA-256), `ESP_EXTRA_INFO` (the crashed TCB, and on RISC-V whether it crashed in an interrupt) and
 * `ESP_PANIC_DETAILS` (an abort's message). Every length is checked against the bytes there are:
 * a dump that does not hold together is refused whole.
 */
export interface CoreDump {
  /** `1.2`: major.minor of the dump format (1.x: ELF; 0.x: the older binary format). */
  formatVersion: string;
  format: 'elf' | 'binary';
  chip: string;
  chipRevision: number | null;
  architecture: 'riscv' | 'xtensa';
  /** The ELF core file a debugger reads; null for the binary format. */
  coreElf: Buffer | null;
  /** Lowercase hex digits, as many as the build kept (CONFIG_APP_RETRIEVE_LEN_ELF_SHA); '' if none. */
  elfSha256Prefix: string;
  crashedTcb: number | null;
  inInterrupt: boolean;
  panicDetails: string;
  /** The crashed task's program counter, when its registers are in the dump. */
  pc: number | null;
  /** RISC-V's mcause from the crashed task's exception frame. */
  exceptionCause: number | null;
  /** A short kind the crash is grouped by: `abort`, `load_access_fault`, `stack_overflow`, ... */
  reason: string;
}

export class InvalidCoreDump extends Error {}

/** esp_chip_model_t (ESP-IDF's esp_chip_info.h): the chip a dump names in its version's high half. */
const CHIPS: Record<number, { name: string; architecture: 'riscv' | 'xtensa' }> = {
  0: { name: 'esp32', architecture: 'xtensa' },
  2: { name: 'esp32s2', architecture: 'xtensa' },
  9: { name: 'esp32s3', architecture: 'xtensa' },
  5: { name: 'esp32c3', architecture: 'riscv' },
  12: { name: 'esp32c2', architecture: 'riscv' },
  13: { name: 'esp32c6', architecture: 'riscv' },
  16: { name: 'esp32h2', architecture: 'riscv' },
  18: { name: 'esp32p4', architecture: 'riscv' },
  20: { name: 'esp32c61', architecture: 'riscv' },
  23: { name: 'esp32c5', architecture: 'riscv' },
  25: { name: 'esp32h21', architecture: 'riscv' },
  28: { name: 'esp32h4', architecture: 'riscv' },
  32: { name: 'esp32s31', architecture: 'riscv' },
};

/** Dump format versions (minor byte, major byte): the header after the first two words, and the checksum. */
const FORMATS: Record<number, { format: 'elf' | 'binary'; headerBytes: number; checksum: 'crc32' | 'sha256' }> = {
  0x0001: { format: 'binary', headerBytes: 16, checksum: 'crc32' },
  0x0002: { format: 'binary', headerBytes: 20, checksum: 'crc32' },
  0x0003: { format: 'binary', headerBytes: 24, checksum: 'crc32' },
  0x0100: { format: 'elf', headerBytes: 20, checksum: 'crc32' },
  0x0101: { format: 'elf', headerBytes: 20, checksum: 'sha256' },
  0x0102: { format: 'elf', headerBytes: 24, checksum: 'crc32' },
  0x0103: { format: 'elf', headerBytes: 24, checksum: 'sha256' },
  0x0104: { format: 'elf', headerBytes: 12, checksum: 'sha256' },
};

const ET_CORE = 4;
const EM_XTENSA = 94;
const EM_RISCV = 243;
const PT_LOAD = 1;
const PT_NOTE = 4;
const NT_PRSTATUS = 1;
const NOTE_CORE_DUMP_INFO = 8266;
const NOTE_EXTRA_INFO = 677;
const NOTE_PANIC_DETAILS = 679;
/** More program headers or notes than a dump of every task of a large application has. */
const MAX_SEGMENTS = 1024;
const MAX_NOTES = 4096;
const MAX_PANIC_DETAILS = 1024;
/** Where the registers sit in a 32-bit prstatus (pr_pid at 24, pr_reg at 72). */
const PRSTATUS_PID = 24;
const PRSTATUS_REGISTERS = 72;
/** ESP-IDF's RISC-V exception frame: 32 registers, mstatus, mtvec, mcause, mtval, mhartid... (RV_STK_FRMSZ, 160 bytes). */
const RISCV_EXCEPTION_FRAME_BYTES = 160;
const RISCV_MCAUSE_OFFSET = 34 * 4;

/** RISC-V exception causes (the privileged specification's mcause codes). */
const RISCV_CAUSES: Record<number, string> = {
  0: 'instruction_address_misaligned',
  1: 'instruction_access_fault',
  2: 'illegal_instruction',
  3: 'breakpoint',
  4: 'load_address_misaligned',
  5: 'load_access_fault',
  6: 'store_address_misaligned',
  7: 'store_access_fault',
  8: 'environment_call',
  11: 'environment_call',
};

export function readCoreDump(bytes: Buffer): CoreDump {
  if (bytes.length < 12) throw new InvalidCoreDump(`${bytes.length} bytes are too few for a core dump's header`);
  const totalLength = bytes.readUInt32LE(0);
  const versionWord = bytes.readUInt32LE(4);
  const formatVersion = versionWord & 0xffff;
  const layout = FORMATS[formatVersion];
  if (!layout) throw new InvalidCoreDump(`not an ESP-IDF core dump: unknown format version 0x${formatVersion.toString(16).padStart(4, '0')}`);
  const chip = CHIPS[versionWord >>> 16];
  if (!chip) throw new InvalidCoreDump(`the dump names chip ${versionWord >>> 16}, which ESP-IDF's core dumps do not come from`);
  if (totalLength !== bytes.length) {
    throw new InvalidCoreDump(`the header says ${totalLength} bytes and ${bytes.length} came: ${totalLength > bytes.length ? 'truncated' : 'trailing bytes'}`);
  }
  const checksumBytes = layout.checksum === 'crc32' ? 4 : 32;
  if (bytes.length < layout.headerBytes + checksumBytes) throw new InvalidCoreDump('the dump is shorter than its header and checksum');
  const covered = bytes.subarray(0, bytes.length - checksumBytes);
  const stored = bytes.subarray(bytes.length - checksumBytes);
  const valid =
    layout.checksum === 'crc32' ? crc32(covered) === stored.readUInt32LE(0) : createHash('sha256').update(covered).digest().equals(stored);
  if (!valid) throw new InvalidCoreDump(`the dump's ${layout.checksum === 'crc32' ? 'CRC-32' : 'SHA-256'} does not match its bytes`);

  // Version 1.4 moved the chip revision to the third word; 1.2 and 1.3 keep it in the sixth.
  const chipRevision = layout.headerBytes === 12 ? bytes.readUInt32LE(8) : layout.headerBytes === 24 ? bytes.readUInt32LE(20) : null;
  const base = {
    formatVersion: `${formatVersion >> 8}.${formatVersion & 0xff}`,
    format: layout.format,
    chip: chip.name,
    chipRevision,
    architecture: chip.architecture,
  };
  if (layout.format === 'binary') {
    return { ...base, coreElf: null, elfSha256Prefix: '', crashedTcb: null, inInterrupt: false, panicDetails: '', pc: null, exceptionCause: null, reason: 'unknown' };
  }
  const coreElf = bytes.subarray(layout.headerBytes, bytes.length - checksumBytes);
  return { ...base, coreElf, ...readCoreElf(coreElf, chip.architecture) };
}

interface Segment {
  type: number;
  offset: number;
  address: number;
  size: number;
}

function readCoreElf(elf: Buffer, architecture: 'riscv' | 'xtensa') {
  if (elf.length < 52 || elf.readUInt32BE(0) !== 0x7f454c46) throw new InvalidCoreDump('the dump holds no ELF file');
  if (elf[4] !== 1 || elf[5] !== 1) throw new InvalidCoreDump('the dump is not a 32-bit little-endian ELF file');
  if (elf.readUInt16LE(16) !== ET_CORE) throw new InvalidCoreDump('the ELF file in the dump is not a core file');
  const machine = elf.readUInt16LE(18);
  if (machine !== (architecture === 'riscv' ? EM_RISCV : EM_XTENSA)) throw new InvalidCoreDump(`the core file's machine (${machine}) is not the chip's`);
  const tableOffset = elf.readUInt32LE(28);
  const entrySize = elf.readUInt16LE(42);
  const count = elf.readUInt16LE(44);
  if (entrySize !== 32 || count === 0 || count > MAX_SEGMENTS || tableOffset + count * entrySize > elf.length) {
    throw new InvalidCoreDump('the core file\'s program headers do not fit in it');
  }
  const segments: Segment[] = [];
  for (let i = 0; i < count; i++) {
    const at = tableOffset + i * entrySize;
    const segment = { type: elf.readUInt32LE(at), offset: elf.readUInt32LE(at + 4), address: elf.readUInt32LE(at + 8), size: elf.readUInt32LE(at + 16) };
    if (segment.offset + segment.size > elf.length) throw new InvalidCoreDump(`segment ${i} runs past the end of the core file`);
    segments.push(segment);
  }

  const tasks = new Map<number, number[]>();
  let elfSha256Prefix = '';
  let crashedTcb: number | null = null;
  let inInterrupt = false;
  let panicDetails = '';
  let notes = 0;
  for (const segment of segments.filter((s) => s.type === PT_NOTE)) {
    const end = segment.offset + segment.size;
    for (let at = segment.offset; at + 12 <= end; ) {
      if (++notes > MAX_NOTES) throw new InvalidCoreDump(`the core file has more than ${MAX_NOTES} notes`);
      const nameSize = elf.readUInt32LE(at);
      const descSize = elf.readUInt32LE(at + 4);
      const type = elf.readUInt32LE(at + 8);
      const nameAt = at + 12;
      const descAt = nameAt + align4(nameSize);
      const next = descAt + align4(descSize);
      if (nameSize > 64 || next > end) throw new InvalidCoreDump('a note of the core file runs past its segment');
      const name = elf.toString('latin1', nameAt, nameAt + nameSize).split('\0')[0];
      const desc = elf.subarray(descAt, descAt + descSize);
      if (name === 'CORE' && type === NT_PRSTATUS && desc.length >= PRSTATUS_REGISTERS + 4) {
        const registers: number[] = [];
        for (let r = PRSTATUS_REGISTERS; r + 4 <= desc.length && registers.length < 64; r += 4) registers.push(desc.readUInt32LE(r));
        tasks.set(desc.readUInt32LE(PRSTATUS_PID), registers);
      } else if (type === NOTE_CORE_DUMP_INFO && desc.length >= 4) {
        elfSha256Prefix = desc.toString('latin1', 4, Math.min(desc.length, 68)).split('\0')[0]!.toLowerCase();
        if (!/^[0-9a-f]*$/.test(elfSha256Prefix)) throw new InvalidCoreDump('the dump\'s ELF SHA-256 is not hex');
      } else if (type === NOTE_EXTRA_INFO && desc.length >= 4) {
        crashedTcb = desc.readUInt32LE(0);
        // RISC-V's extra info is the crashed TCB and whether it was in an interrupt; Xtensa's is
        // the TCB followed by exception registers.
        inInterrupt = architecture === 'riscv' && desc.length >= 8 && desc.readUInt32LE(4) !== 0;
      } else if (type === NOTE_PANIC_DETAILS) {
        panicDetails = desc.toString('utf8', 0, Math.min(desc.length, MAX_PANIC_DETAILS)).replace(/\0+$/, '');
      }
      at = next;
    }
  }

  const registers = crashedTcb === null ? undefined : tasks.get(crashedTcb);
  // RISC-V's prstatus is pc, then x1..x31: the exception frame ends at the crashed sp (x2).
  const pc = registers?.[0] ?? null;
  const exceptionCause =
    architecture === 'riscv' && registers?.[2] !== undefined ? wordAt(elf, segments, registers[2] - RISCV_EXCEPTION_FRAME_BYTES + RISCV_MCAUSE_OFFSET) : null;
  return { elfSha256Prefix, crashedTcb, inInterrupt, panicDetails, pc, exceptionCause, reason: reasonOf(panicDetails, exceptionCause) };
}

/** The 32-bit word at `address` in a loadable segment of the core file, or null if none holds it. */
function wordAt(elf: Buffer, segments: Segment[], address: number): number | null {
  const segment = segments.find((s) => s.type === PT_LOAD && address >= s.address && address + 4 <= s.address + s.size);
  return segment ? elf.readUInt32LE(segment.offset + (address - segment.address)) : null;
}

/** The kind a crash is grouped by: an abort's message says what called it; an exception, its cause. */
export function reasonOf(panicDetails: string, exceptionCause: number | null): string {
  if (panicDetails) {
    if (/stack overflow|stack protection fault|stack smashing/i.test(panicDetails)) return 'stack_overflow';
    if (/assert/i.test(panicDetails)) return 'assert';
    if (/wdt|watchdog/i.test(panicDetails)) return 'watchdog';
    if (/abort\(\)/.test(panicDetails)) return 'abort';
    return 'panic';
  }
  if (exceptionCause === null) return 'unknown';
  // The top bit marks an interrupt (an interrupt watchdog, on ESP-IDF), not an exception.
  if (exceptionCause >>> 31) return 'interrupt';
  return RISCV_CAUSES[exceptionCause] ?? 'unknown';
}

const align4 = (size: number) => (size + 3) & ~3;
