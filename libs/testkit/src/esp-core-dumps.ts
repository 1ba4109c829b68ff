import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * ESP-IDF core dumps, in the format ESP-IDF writes to flash after a panic (its ELF format: a
 * header, an ELF core file, a checksum), made from an ELF that Debian's RISC-V compiler built with
 * `esp-app/crash.c` (makeEspBuild({ crashCode: true })). The crashed task's stack is laid out from
 * the functions' own prologues as the code would have left it, so that gdb, unwinding it with the
 * ELF's call-frame information, finds the frames a device's dump would show.
 *
 * The layout follows what Espressif's esp-coredump reads (components/espcoredump in ESP-IDF): the
 * crashed task's registers in a `CORE` note (an ELF prstatus, its pid the task's TCB address), its
 * TCB and stack as loadable segments, and the notes `ESP_CORE_DUMP_INFO` (version and the first hex
 * digits of the app ELF's SHA-256), `ESP_EXTRA_INFO` (the crashed TCB) and `ESP_PANIC_DETAILS`.
 */
export interface CoreDumpOptions {
  /** The application's ELF, linked with crash.c. */
  elf: Buffer;
  /** The crashed task's calls, innermost first, each calling the one before it. */
  calls?: string[];
  /** The crashed task's name, in its TCB. */
  taskName?: string;
  /** An abort's message (ESP_PANIC_DETAILS); without it the crash is the exception `mcause`. */
  panicDetails?: string;
  /** The RISC-V exception cause in the crashed task's exception frame: 5 is a load access fault. */
  mcause?: number;
  /** `crc32` writes version 1.2 (ESP-IDF's default), `sha256` version 1.4. */
  checksum?: 'crc32' | 'sha256';
  /** Hex digits of the ELF's SHA-256 in the dump (CONFIG_APP_RETRIEVE_LEN_ELF_SHA; 9 by default). */
  elfShaDigits?: number;
  /** Another ELF's SHA-256 to name instead of `elf`'s: a dump of a build the service does not know. */
  elfSha256?: string;
  /** esp_chip_id_t: 5 is the ESP32-C3; 0 (ESP32), 2 (-S2) and 9 (-S3) are Xtensa chips, whose core files say so. */
  chipId?: number;
  chipRevision?: number;
  /** Bytes of stack below the crashed frames (a larger dump). */
  stackPadding?: number;
}

export const CORE_DUMP_TCB_SYMBOL = 'crashed_task_tcb';
const TASK_NAME_OFFSET = 52;
const TCB_BYTES = TASK_NAME_OFFSET + 16;
/** ESP-IDF's RISC-V exception frame (RvExcFrame): mepc and x1..x31, then mstatus, mtvec, mcause, mtval, mhartid. */
const EXCEPTION_FRAME_WORDS = 40;
const STACK_BASE = 0x3fc8e000;

interface Instruction {
  address: number;
  length: number;
  text: string;
}

interface FunctionFrame {
  start: number;
  /** Bytes the prologue takes off sp. */
  size: number;
  /** Where the prologue saves ra and s0, from sp after it; null when it does not. */
  raSlot: number | null;
  s0Slot: number | null;
  /** The first instruction after the prologue (s0 is the frame's CFA from there). */
  body: number;
  /** Return addresses of its calls, by callee. */
  returnsFrom: Map<string, number>;
}

export function makeCoreDump(options: CoreDumpOptions): Buffer {
  const calls = options.calls ?? ['read_sensor', 'average_reading', 'sensor_task'];
  const { functions, symbols } = readElf(options.elf);
  const frames = calls.map((name) => {
    const frame = functions.get(name);
    if (!frame) throw new Error(`the ELF has no function ${name} with a frame-pointer prologue (crash.c, compiled -O0 -fno-omit-frame-pointer)`);
    return frame;
  });
  const tcbAddress = symbols.get(CORE_DUMP_TCB_SYMBOL);
  if (tcbAddress === undefined) throw new Error(`the ELF has no ${CORE_DUMP_TCB_SYMBOL}: make it with crashCode`);

  // The stack, from its lowest address: padding, the exception frame, then one frame per call.
  const padding = options.stackPadding ?? 0;
  const frameBase = STACK_BASE + padding;
  const sp = frameBase + EXCEPTION_FRAME_WORDS * 4;
  const cfas: number[] = [];
  let cfa = sp;
  for (const frame of frames) cfas.push((cfa += frame.size));
  const stackEnd = cfa + 16;
  const stack = Buffer.alloc(stackEnd - STACK_BASE);
  const put = (address: number, value: number) => stack.writeUInt32LE(value >>> 0, address - STACK_BASE);
  frames.forEach((frame, i) => {
    const frameSp = cfas[i]! - frame.size;
    const caller = calls[i + 1];
    const returnAddress = caller === undefined ? 0 : frames[i + 1]!.returnsFrom.get(calls[i]!);
    if (returnAddress === undefined) throw new Error(`${caller} does not call ${calls[i]}`);
    if (frame.raSlot !== null) put(frameSp + frame.raSlot, returnAddress);
    // s0 saved here is the caller's frame pointer: its CFA.
    if (frame.s0Slot !== null) put(frameSp + frame.s0Slot, cfas[i + 1] ?? 0);
  });

  const registers = new Array<number>(32).fill(0);
  registers[0] = frames[0]!.body; // pc
  registers[1] = calls.length > 1 ? frames[1]!.returnsFrom.get(calls[0]!)! : 0; // ra
  registers[2] = sp;
  registers[8] = cfas[0]!; // s0
  registers.forEach((value, i) => put(frameBase + i * 4, value));
  put(frameBase + 32 * 4, 0x1881); // mstatus
  put(frameBase + 34 * 4, options.panicDetails === undefined ? (options.mcause ?? 5) : 2);

  const tcb = Buffer.alloc(TCB_BYTES);
  tcb.writeUInt32LE(frameBase, 0);
  tcb.write((options.taskName ?? 'sensor').slice(0, 15), TASK_NAME_OFFSET, 'latin1');

  const chipId = options.chipId ?? 5;
  const checksum = options.checksum ?? 'crc32';
  const version = ((chipId & 0xffff) << 16) | (checksum === 'crc32' ? 0x0102 : 0x0104);
  const elfSha256 = options.elfSha256 ?? createHash('sha256').update(options.elf).digest('hex');
  const shaField = Buffer.alloc(64);
  shaField.write(elfSha256.slice(0, options.elfShaDigits ?? 9), 'latin1');
  const info = Buffer.concat([u32(version), shaField, Buffer.alloc(4)]);

  const taskNotes = note('CORE', 1, prstatus(tcbAddress, registers));
  const infoNotes = Buffer.concat([
    note('ESP_CORE_DUMP_INFO', 8266, info),
    note('ESP_EXTRA_INFO', 677, Buffer.concat([u32(tcbAddress), u32(0)])),
    ...(options.panicDetails === undefined ? [] : [note('ESP_PANIC_DETAILS', 679, Buffer.from(options.panicDetails, 'latin1'))]),
  ]);
  const xtensa = [0, 2, 9].includes(chipId);
  const core = coreElf(xtensa ? 94 : 243, [
    { type: 4, address: 0, data: taskNotes },
    { type: 1, address: tcbAddress, data: tcb },
    { type: 1, address: STACK_BASE, data: stack },
    { type: 4, address: 0, data: infoNotes },
  ]);
  return wrap(core, version, checksum, options.chipRevision ?? 3);
}

/** The header ESP-IDF puts before the ELF and the checksum after it, over both. */
function wrap(core: Buffer, version: number, checksum: 'crc32' | 'sha256', chipRevision: number): Buffer {
  if (checksum === 'crc32') {
    // Version 1.2: total length, version, task count, TCB size, segment count, chip revision.
    const header = Buffer.concat([u32(24 + core.length + 4), u32(version), u32(0), u32(0), u32(0), u32(chipRevision)]);
    return Buffer.concat([header, core, u32(crc32(Buffer.concat([header, core])))]);
  }
  // Version 1.4: total length, version, chip revision.
  const header = Buffer.concat([u32(12 + core.length + 32), u32(version), u32(chipRevision)]);
  return Buffer.concat([header, core, createHash('sha256').update(header).update(core).digest()]);
}

function prstatus(pid: number, registers: number[]): Buffer {
  const status = Buffer.alloc(204);
  status.writeUInt32LE(pid >>> 0, 24);
  registers.forEach((value, i) => status.writeUInt32LE(value >>> 0, 72 + i * 4));
  return status;
}

function note(name: string, type: number, desc: Buffer): Buffer {
  const nameBytes = Buffer.from(`${name}\0`, 'latin1');
  return Buffer.concat([u32(nameBytes.length), u32(desc.length), u32(type), pad4(nameBytes), pad4(desc)]);
}

function coreElf(machine: number, segments: Array<{ type: number; address: number; data: Buffer }>): Buffer {
  const header = Buffer.alloc(52);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 1, 1, 1]).copy(header);
  header.writeUInt16LE(4, 16); // ET_CORE
  header.writeUInt16LE(machine, 18); // EM_RISCV or EM_XTENSA
  header.writeUInt32LE(1, 20);
  header.writeUInt32LE(52, 28); // e_phoff
  header.writeUInt16LE(52, 40);
  header.writeUInt16LE(32, 42);
  header.writeUInt16LE(segments.length, 44);
  let offset = 52 + 32 * segments.length;
  const programHeaders = segments.map((segment) => {
    const entry = Buffer.alloc(32);
    entry.writeUInt32LE(segment.type, 0);
    entry.writeUInt32LE(offset, 4);
    entry.writeUInt32LE(segment.address >>> 0, 8);
    entry.writeUInt32LE(segment.address >>> 0, 12);
    entry.writeUInt32LE(segment.data.length, 16);
    entry.writeUInt32LE(segment.type === 1 ? segment.data.length : 0, 20);
    entry.writeUInt32LE(segment.type === 1 ? 6 : 0, 24); // PF_R | PF_W
    offset += segment.data.length;
    return entry;
  });
  return Buffer.concat([header, ...programHeaders, ...segments.map((segment) => segment.data)]);
}

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value >>> 0);
  return bytes;
};
const pad4 = (bytes: Buffer) => Buffer.concat([bytes, Buffer.alloc((4 - (bytes.length % 4)) % 4)]);

const read = new Map<string, { functions: Map<string, FunctionFrame>; symbols: Map<string, number> }>();

/** The functions' prologues and calls, from objdump's disassembly; the symbols, from nm. */
function readElf(elf: Buffer) {
  const key = createHash('sha256').update(elf).digest('hex');
  const cached = read.get(key);
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'core-dump-elf-'));
  try {
    const path = join(dir, 'app.elf');
    writeFileSync(path, elf);
    const functions = new Map<string, FunctionFrame>();
    let instructions: Instruction[] = [];
    let name = '';
    const finish = () => {
      // Only the frame-pointer prologues of crash.c are read; other code (app.c) is optimised.
      const frame = name ? frameOf(instructions) : null;
      if (frame) functions.set(name, frame);
    };
    for (const line of run('riscv64-unknown-elf-objdump', ['-d', '--no-show-raw-insn', path]).split('\n')) {
      const start = /^([0-9a-f]+) <(\w+)>:$/.exec(line);
      if (start) {
        finish();
        name = start[2]!;
        instructions = [];
        continue;
      }
      const instruction = /^\s*([0-9a-f]+):\s+(.*)$/.exec(line);
      if (instruction) instructions.push({ address: parseInt(instruction[1]!, 16), length: 0, text: instruction[2]!.replace(/\s+/g, ' ').trim() });
    }
    finish();
    const symbols = new Map<string, number>();
    for (const line of run('riscv64-unknown-elf-nm', [path]).split('\n')) {
      const symbol = /^([0-9a-f]+) \w (\w+)$/.exec(line);
      if (symbol) symbols.set(symbol[2]!, parseInt(symbol[1]!, 16));
    }
    const result = { functions, symbols };
    read.set(key, result);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function frameOf(instructions: Instruction[]): FunctionFrame | null {
  // An instruction's length is the distance to the next one (the last one's does not matter here).
  instructions.forEach((instruction, i) => (instruction.length = (instructions[i + 1]?.address ?? instruction.address + 2) - instruction.address));
  const size = Number(/^addi? sp,sp,-(\d+)$/.exec(instructions[0]?.text ?? '')?.[1] ?? NaN);
  const slot = (register: string) => {
    const found = instructions.slice(0, 4).map((instruction) => new RegExp(`^sw ${register},(\\d+)\\(sp\\)$`).exec(instruction.text)).find(Boolean);
    return found ? Number(found[1]) : null;
  };
  const framePointer = instructions.findIndex((instruction) => /^addi? s0,sp,\d+$/.test(instruction.text));
  if (Number.isNaN(size) || framePointer < 0) return null;
  const returnsFrom = new Map<string, number>();
  for (const instruction of instructions) {
    const call = /^jalr? (?:ra,)?[0-9a-f]+ <(\w+)>$/.exec(instruction.text);
    if (call) returnsFrom.set(call[1]!, instruction.address + instruction.length);
  }
  return { start: instructions[0]!.address, size, raSlot: slot('ra'), s0Slot: slot('s0'), body: instructions[framePointer + 1]!.address, returnsFrom };
}

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw new Error(`${command} could not be started (npm test installs it): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}
