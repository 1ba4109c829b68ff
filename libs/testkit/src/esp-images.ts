import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * ESP32-C3 application images made by Espressif's own tool: Debian's RISC-V compiler links
 * `esp-app/app.c` (an app descriptor where ESP-IDF puts it) and esptool's `elf2image` makes the
 * image, as ESP-IDF's build does. `npm test` installs both (scripts/ensure-built.mjs, --image-tools).
 */
export interface EspImageOptions {
  secureVersion?: number;
  version?: string;
  projectName?: string;
  idfVersion?: string;
  /** major × 100 + minor; esptool's --min-rev-full and --max-rev-full. */
  minChipRevision?: number;
  maxChipRevision?: number;
  minEfuseBlockRevision?: number;
  maxEfuseBlockRevision?: number;
  /** elf2image appends a SHA-256 unless this is false (--dont-append-digest). */
  appendHash?: boolean;
  /** Bytes of read-only data: a larger image. */
  tableBytes?: number;
  /** The app descriptor's magic word; another than 0xABCD5432 makes an image without one. */
  descriptorMagic?: number;
  /** Links in `esp-app/crash.c`, with debugging information: a build the core-dump tests crash. */
  crashCode?: boolean;
}

/** A build as CI has it: the application image and the ELF it was made from. */
export interface EspBuild {
  image: Buffer;
  elf: Buffer;
}

const rootDir = join(__dirname, '..', '..', '..');
const appDir = join(__dirname, '..', 'esp-app');
const esptool = join(rootDir, '.tools', 'esptool-venv', 'bin', 'esptool');
const made = new Map<string, EspBuild>();

/** The image's bytes; the same options answer the same bytes from the second call on. */
export function makeEspImage(options: EspImageOptions = {}): Buffer {
  return makeEspBuild(options).image;
}

/** The image and its ELF; the same options answer the same bytes from the second call on. */
export function makeEspBuild(options: EspImageOptions = {}): EspBuild {
  const key = JSON.stringify(options);
  const cached = made.get(key);
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'esp-image-'));
  try {
    const elf = join(dir, 'app.elf');
    const crashObject = join(dir, 'crash.o');
    const bin = join(dir, 'app.bin');
    const defines = {
      APP_DESC_MAGIC: `0x${(options.descriptorMagic ?? 0xabcd5432).toString(16)}u`,
      SECURE_VERSION: String(options.secureVersion ?? 0),
      APP_VERSION: JSON.stringify(options.version ?? '1.0.0'),
      PROJECT_NAME: JSON.stringify(options.projectName ?? 'greenhouse'),
      IDF_VERSION: JSON.stringify(options.idfVersion ?? 'v5.5.5'),
      MIN_EFUSE_BLK_REV: String(options.minEfuseBlockRevision ?? 0),
      MAX_EFUSE_BLK_REV: String(options.maxEfuseBlockRevision ?? 199),
      TABLE_BYTES: String(options.tableBytes ?? 300),
    };
    const target = ['-march=rv32imc_zicsr', '-mabi=ilp32', '-nostdlib', '-ffreestanding'];
    if (options.crashCode) {
      // Unoptimised, with frame pointers and DWARF: the frames esp-core-dumps.ts lays out.
      run('riscv64-unknown-elf-gcc', [...target, '-O0', '-g', '-fno-omit-frame-pointer', '-c', join(appDir, 'crash.c'), '-o', crashObject]);
    }
    run('riscv64-unknown-elf-gcc', [
      ...target, '-Os',
      ...Object.entries(defines).map(([name, value]) => `-D${name}=${value}`),
      '-T', join(appDir, 'app.ld'), '-Wl,--gc-sections', join(appDir, 'app.c'),
      // Nothing calls the crashing tasks: kept by name, as a scheduler would reach them.
      ...(options.crashCode ? [crashObject, '-Wl,-u,sensor_task', '-Wl,-u,calibration_task', '-Wl,-u,crashed_task_tcb'] : []),
      '-o', elf,
    ]);
    run(esptool, [
      '--chip', 'esp32c3', 'elf2image',
      // Where ESP-IDF's build writes the ELF's SHA-256: the descriptor's app_elf_sha256.
      '--elf-sha256-offset', '0xb0',
      '--min-rev-full', String(options.minChipRevision ?? 3),
      '--max-rev-full', String(options.maxChipRevision ?? 199),
      ...(options.appendHash === false ? ['--dont-append-digest'] : []),
      '-o', bin, elf,
    ]);
    const build = { image: readFileSync(bin), elf: readFileSync(elf) };
    made.set(key, build);
    return build;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What `esptool image-info` prints of an image, in the API's field names (docs/api.md, "The image").
 * Written out here, not imported from the code under test: it is what the tests hold that code to.
 */
export interface EsptoolImageInfo {
  chip: string;
  chip_id: number;
  secure_version: number;
  version: string;
  project_name: string;
  idf_version: string;
  elf_sha256: string;
  min_chip_revision: number;
  max_chip_revision: number;
  min_efuse_block_revision: number;
  max_efuse_block_revision: number;
  hash_appended: boolean;
}

/** Runs `esptool image-info` on the bytes and reads its lines. */
export function esptoolImageInfo(image: Buffer): EsptoolImageInfo {
  const dir = mkdtempSync(join(tmpdir(), 'esp-image-info-'));
  try {
    const path = join(dir, 'image.bin');
    writeFileSync(path, image);
    const text = run(esptool, ['image-info', path]);
    const line = (label: string) => {
      const match = new RegExp(`^${label}: (.*)$`, 'm').exec(text);
      if (!match) throw new Error(`esptool image-info printed no "${label}" line:\n${text}`);
      return match[1]!.trim();
    };
    const revision = (value: string) => {
      const [major, minor] = /^v?(\d+)\.(\d+)/.exec(value)!.slice(1).map(Number);
      return major! * 100 + minor!;
    };
    const [chipId, chipName] = /^(\d+) \((.+)\)$/.exec(line('Chip ID'))!.slice(1);
    const validationHash = /^Validation hash: \S+ \((\w+)\)$/m.exec(text);
    return {
      chip: chipName!.toLowerCase().replace(/-/g, ''),
      chip_id: Number(chipId),
      secure_version: Number(line('Secure version')),
      version: line('App version'),
      project_name: line('Project name'),
      idf_version: line('ESP-IDF'),
      elf_sha256: line('ELF file SHA256'),
      min_chip_revision: revision(line('Minimal chip revision')),
      max_chip_revision: revision(line('Maximal chip revision')),
      min_efuse_block_revision: revision(line('Minimal eFuse block revision')),
      max_efuse_block_revision: revision(line('Maximal eFuse block revision')),
      hash_appended: validationHash?.[1] === 'valid',
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.error) throw new Error(`${command} could not be started (npm test installs it): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}
