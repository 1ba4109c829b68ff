import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdkBinary } from './harness/device-process';
import { firmwareImage } from './harness/firmware-images';

// The device SDK's delta applier (src/ota_delta.c) against detools itself (pinned, installed by
// scripts/ensure-built.mjs --device-sdk): patches that detools makes from the command line between
// real RISC-V images, in esp_delta_ota's format (sequential, heatshrink 8/7), applied byte-exact
// by our applier fed in any pieces and across power cuts, and applied by detools too; and what the
// applier refuses. The images are test/delta/firmware.c, compiled for a RISC-V chip with Debian's
// cross compiler and picolibc, and cut to their bytes with objcopy.

const sdk = join(__dirname, '..');
const root = join(sdk, '..');
const detools = join(root, '.tools', 'detools-venv', 'bin', 'detools');
const work = mkdtempSync(join(tmpdir(), 'ota-delta-'));

function run(command: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 120_000, env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function must(command: string, args: string[]): string {
  const result = run(command, args);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stderr}`);
  return result.stdout;
}

/** A patch made by detools from the command line: sequential, heatshrink with esp_delta_ota's window 8 and lookahead 7 unless `options` say otherwise. */
function patch(from: string, to: string, name: string, options = ['--compression', 'heatshrink', '--heatshrink-window-sz2', '8', '--heatshrink-lookahead-sz2', '7'], command = 'create_patch'): string {
  const path = join(work, name);
  must(detools, [command, ...options, from, to, path]);
  return path;
}

function apply(base: string, patchPath: string, args: string[] = [], build: 'gcc' | 'gcc32' | 'clang' = 'gcc', out = join(work, `applied-${Math.random().toString(36).slice(2)}.bin`)) {
  const result = run(sdkBinary('ota-delta-apply', build), [base, patchPath, out, ...args]);
  return { ...result, out, report: result.status === 0 ? (JSON.parse(result.stdout.trim()) as { target_bytes: number; state_bytes: number; saved_state_bytes: number; cuts: number; patch_bytes_fed_again: number; pauses: number; unaligned_pauses: number }) : undefined };
}

let images: Record<number, string>;

beforeAll(() => {
  for (const tool of [detools]) {
    try {
      statSync(tool);
    } catch {
      throw new Error(`${tool} is missing: scripts/ensure-built.mjs --device-sdk installs detools there`);
    }
  }
  images = { 1: firmwareImage(work, 1), 2: firmwareImage(work, 2), 3: firmwareImage(work, 3) };
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the delta applier', () => {
  it('applies detools patches between real RISC-V images byte-exact, fed whole, a byte at a time, or cut by power losses', () => {
    const lines: string[] = [];
    for (const [from, to] of [[1, 2], [2, 3], [1, 3]] as const) {
      const patchPath = patch(images[from]!, images[to]!, `${from}-${to}.patch`);
      const target = readFileSync(images[to]!);
      for (const [args, build] of [
        [[], 'gcc'],
        [['--piece', '1'], 'clang'],
        [['--piece', '13', '--cut-every', '64', '--seed', String(from * 10 + to)], 'gcc32'],
        [['--piece', '4096', '--cut-every', '200', '--seed', '7'], 'gcc'],
      ] as const) {
        const applied = apply(images[from]!, patchPath, [...args], build);
        if (applied.status !== 0) throw new Error(`ota-delta-apply ${args.join(' ')} exited ${applied.status}: ${applied.stderr}`);
        expect({ pair: `${from}->${to}`, args, same: readFileSync(applied.out).equals(target) }).toEqual({ pair: `${from}->${to}`, args, same: true });
        // A power cut throws away at most the patch bytes fed since the last save.
        if (args.includes('--cut-every')) expect(applied.report!.patch_bytes_fed_again).toBeLessThanOrEqual(applied.report!.cuts * Number(args[args.indexOf('--cut-every') + 1]));
      }
      // detools' own apply agrees: the patch is what esp_delta_ota would apply.
      const byDetools = join(work, `detools-${from}-${to}.bin`);
      must(detools, ['apply_patch', images[from]!, patchPath, byDetools]);
      expect(readFileSync(byDetools).equals(target)).toBe(true);
      lines.push(`${from}->${to}: ${statSync(patchPath).size} B patch for a ${target.length} B image (${((100 * statSync(patchPath).size) / target.length).toFixed(1)}%)`);
    }
    const state = apply(images[1]!, join(work, '1-2.patch')).report!.state_bytes;
    process.stdout.write(`[delta] ${lines.join('; ')}; the applier's state is ${state} B\n`);
  });

  it('saves its state in one layout on every ABI: a cut on one build resumes byte-exact on another', () => {
    const patchPath = patch(images[1]!, images[3]!, 'across.patch');
    const target = readFileSync(images[3]!);
    const size = statSync(patchPath).size;
    for (const [from, to] of [['gcc', 'gcc32'], ['gcc32', 'clang'], ['clang', 'gcc']] as const) {
      for (const stopAfter of [1, 3, Math.floor(size / 3), size - 1]) {
        const out = join(work, `across-${from}-${to}-${stopAfter}.bin`);
        const stopped = apply(images[1]!, patchPath, ['--piece', '97', '--stop-after', String(stopAfter)], from, out);
        expect({ from, stopAfter, status: stopped.status }).toEqual({ from, stopAfter, status: 3 });
        const resumed = apply(images[1]!, patchPath, ['--resume'], to, out);
        expect({ from, to, stopAfter, status: resumed.status, stderr: resumed.stderr }).toEqual({ from, to, stopAfter, status: 0, stderr: '' });
        expect({ from, to, stopAfter, same: readFileSync(out).equals(target), saved: resumed.report!.saved_state_bytes }).toEqual({ from, to, stopAfter, same: true, saved: 570 });
      }
    }
    // A saved state of another layout (its version byte changed) is not read as this one.
    const out = join(work, 'damaged-state.bin');
    expect(apply(images[1]!, patchPath, ['--stop-after', '100'], 'gcc', out).status).toBe(3);
    const state = readFileSync(`${out}.state`);
    state[0] = 2;
    writeFileSync(`${out}.state`, state);
    const refused = apply(images[1]!, patchPath, ['--resume'], 'gcc', out);
    expect([refused.status, refused.stderr]).toEqual([2, expect.stringContaining('holds no state this applier reads')]);
  });

  it('pauses exactly where the new image reaches each multiple of pause_every, mid-byte and mid-copy, and resumes from a saved pause on any ABI', () => {
    // The client saves at pauses so that a resumed slot starts on a flash sector (device-sdk/README.md, "Delta patches").
    const patchPath = patch(images[1]!, images[3]!, 'pauses.patch');
    const target = readFileSync(images[3]!);
    for (const [pauseEvery, piece, build] of [[256, 1, 'clang'], [512, 97, 'gcc32'], [4096, 4096, 'gcc']] as const) {
      const applied = apply(images[1]!, patchPath, ['--piece', String(piece), '--pause-every', String(pauseEvery), '--cut-every', '40', '--seed', String(pauseEvery)], build);
      if (applied.status !== 0) throw new Error(`ota-delta-apply exited ${applied.status}: ${applied.stderr}`);
      const report = applied.report!;
      expect({ pauseEvery, same: readFileSync(applied.out).equals(target), unaligned: report.unaligned_pauses }).toEqual({ pauseEvery, same: true, unaligned: 0 });
      // Every multiple below the image's end is a pause, at least once (a cut replays some).
      expect(report.pauses).toBeGreaterThanOrEqual(Math.floor((target.length - 1) / pauseEvery));
      expect(report.cuts).toBeGreaterThan(0);
    }
    const size = statSync(patchPath).size;
    for (const [from, to] of [['gcc32', 'gcc'], ['gcc', 'clang']] as const) {
      for (const stopAfter of [1, Math.floor(size / 2), size - 60]) {
        const out = join(work, `pause-${from}-${to}-${stopAfter}.bin`);
        const stopped = apply(images[1]!, patchPath, ['--pause-every', '256', '--stop-after', String(stopAfter)], from, out);
        expect({ from, stopAfter, status: stopped.status }).toEqual({ from, stopAfter, status: 3 });
        const resumed = apply(images[1]!, patchPath, ['--pause-every', '256', '--resume'], to, out);
        expect({ from, to, stopAfter, status: resumed.status, stderr: resumed.stderr }).toEqual({ from, to, stopAfter, status: 0, stderr: '' });
        expect({ from, to, stopAfter, same: readFileSync(out).equals(target) }).toEqual({ from, to, stopAfter, same: true });
      }
    }
  });

  it('refuses what it cannot apply, with the reason, and never reports a partial image as done', () => {
    const good = patch(images[1]!, images[2]!, 'refusals.patch');
    const bytes = readFileSync(good);
    // The heatshrink byte follows the type byte and the new image's size (a detools size: bytes
    // with bit 7 set, then one without).
    let heatshrinkAt = 1;
    while (bytes[heatshrinkAt]! & 0x80) heatshrinkAt++;
    heatshrinkAt++;
    const cases: Array<{ what: string; patch: Buffer | string; reason: RegExp }> = [
      { what: 'lzma compression', patch: patch(images[1]!, images[2]!, 'lzma.patch', ['--compression', 'lzma']), reason: /not compressed with heatshrink/ },
      { what: 'an in-place patch', patch: patch(images[1]!, images[2]!, 'in-place.patch', ['--memory-size', '65536', '--segment-size', '4096', '--compression', 'heatshrink'], 'create_patch_in_place'), reason: /not a sequential patch/ },
      { what: 'a patch cut short', patch: bytes.subarray(0, bytes.length - 40), reason: /ended before the new image/ },
      { what: 'bytes after the end', patch: Buffer.concat([bytes, Buffer.from([0xff, 0xff, 0xff, 0xff])]), reason: /past the end of the patch/ },
      { what: 'a window of 2^9', patch: Buffer.concat([bytes.subarray(0, heatshrinkAt), Buffer.from([((9 - 4) << 4) | (7 - 3)]), bytes.subarray(heatshrinkAt + 1)]), reason: /window over 2\^8/ },
    ];
    for (const { what, patch: given, reason } of cases) {
      const path = typeof given === 'string' ? given : join(work, `${what.replaceAll(' ', '-')}.patch`);
      if (typeof given !== 'string') writeFileSync(path, given);
      const applied = apply(images[1]!, path);
      expect({ what, status: applied.status }).toEqual({ what, status: 1 });
      expect({ what, stderr: applied.stderr }).toEqual({ what, stderr: expect.stringMatching(reason) });
    }
    // A base that is not the one the patch was made from gives other bytes: the client's SHA-256
    // check of the result (as for a full image) is what catches it.
    const wrongBase = apply(images[2]!, good);
    expect(wrongBase.status === 0 && readFileSync(wrongBase.out).equals(readFileSync(images[2]!))).toBe(false);
  });
});
