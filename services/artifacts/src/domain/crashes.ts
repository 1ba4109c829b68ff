import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { conflict, invalidArgument, notFound, resourceExhausted } from '@ota/errors';
import { InvalidCoreDump, readCoreDump, type CoreDump } from './core-dump';
import type { Crash, CrashGroup, CrashGroupSummary } from './crash-model';
import type { Artifact } from './model';
import type { ArtifactStore, BinaryStorage, CrashDecoder, CrashStore } from './ports';

export interface CrashesDeps {
  store: CrashStore;
  artifacts: ArtifactStore;
  storage: BinaryStorage;
  decoder: CrashDecoder;
  workDir: string;
  maxDumpBytes: number;
  maxPieceBytes: number;
  leaseMs: number;
  now?: () => Date;
}

export interface CoreDumpPiece {
  projectId: string;
  deviceId: string;
  /** The build number the device last reported running; 0 if none. */
  deviceBuildNumber: number;
  sha256: string;
  size: number;
  offset: number;
  piece: Buffer;
  maxPerDevicePerHour: number;
}

/** The frames a crash is grouped by: the first ones below the panic's own machinery. */
const SIGNATURE_FRAMES = 5;
const PANIC_MACHINERY = /^(panic_abort|esp_system_abort|abort|__assert_func|__stack_chk_fail|_esp_error_check_failed|esp_panic_handler|panic_handler|vPortTaskWrapper|xt_unhandled_exception)$/;
/** Fewer hex digits than this match too many builds to say which one crashed. */
const MIN_ELF_PREFIX_DIGITS = 8;
const HOUR_MS = 3_600_000;

/**
 * Core dumps (docs/api.md, "Core dumps"): received in pieces that resume after a cut, checked
 * whole, stored by their SHA-256, blamed on a build, decoded by workers off the request's path and
 * grouped by the crash's signature.
 */
export class Crashes {
  private readonly now: () => Date;

  constructor(private readonly deps: CrashesDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Takes one piece; answers where the next one starts, and the crash once the dump is whole. */
  async receive(request: CoreDumpPiece): Promise<{ received: number; crash: Crash | null }> {
    const { store, maxDumpBytes, maxPieceBytes } = this.deps;
    const sha256 = request.sha256.toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw invalidArgument('sha256 must be the whole dump\'s SHA-256, 64 hex digits');
    if (!Number.isInteger(request.size) || request.size < 1) throw invalidArgument('size must be the whole dump\'s size in bytes');
    if (request.size > maxDumpBytes) throw invalidArgument(`the dump is ${request.size} bytes; the service takes dumps of at most ${maxDumpBytes} bytes (COREDUMP_MAX_BYTES)`);
    if (request.piece.length > maxPieceBytes) throw invalidArgument(`a piece is at most ${maxPieceBytes} bytes; this one is ${request.piece.length}`);
    if (!Number.isInteger(request.offset) || request.offset < 0 || request.offset + request.piece.length > request.size) {
      throw invalidArgument(`the piece at offset ${request.offset} with ${request.piece.length} bytes lies outside the dump's ${request.size} bytes`);
    }

    const done = await store.findCrashByDump(request.projectId, request.deviceId, sha256);
    if (done) return { received: done.size, crash: done };

    const id = uploadId(request.projectId, request.deviceId, sha256);
    let received = await store.receivedOf(id);
    if (received === 0) {
      // A new dump, not a resumed one: the device's allowance is spent on starting, so that a
      // crash-looping device cannot fill the store.
      const since = new Date(this.now().getTime() - HOUR_MS);
      if (request.maxPerDevicePerHour > 0 && (await store.countCrashesSince(request.projectId, request.deviceId, since)) >= request.maxPerDevicePerHour) {
        throw resourceExhausted(`this device sent ${request.maxPerDevicePerHour} core dumps in the last hour (COREDUMP_MAX_PER_DEVICE_PER_HOUR); keep this one and send it later`, 600);
      }
    }
    const upload = await store.openUpload({ id, projectId: request.projectId, deviceId: request.deviceId, sha256, size: request.size, createdAt: this.now() });
    if (upload.size !== request.size) throw invalidArgument(`this dump was started with size ${upload.size}, not ${request.size}`);
    // A piece where the upload does not stand is not an error: the answer says where to go on.
    if (request.offset === received && request.piece.length > 0) received = await store.addPiece(id, request.offset, request.piece);
    if (received < request.size) return { received, crash: null };

    const bytes = await store.piecesOf(id);
    if (bytes.length < request.size) {
      // A racing request finished the dump and dropped its pieces while this one read them.
      const stored = await store.findCrashByDump(request.projectId, request.deviceId, sha256);
      return stored ? { received: stored.size, crash: stored } : { received: await store.receivedOf(id), crash: null };
    }
    try {
      const crash = await this.store(request, sha256, bytes);
      return { received: request.size, crash };
    } catch (error) {
      const stored = await store.findCrashByDump(request.projectId, request.deviceId, sha256);
      if (stored) return { received: stored.size, crash: stored };
      throw error;
    } finally {
      await store.dropUpload(id);
    }
  }

  private async store(request: CoreDumpPiece, sha256: string, bytes: Buffer): Promise<Crash> {
    if (createHash('sha256').update(bytes).digest('hex') !== sha256) {
      throw invalidArgument('the pieces received do not have the SHA-256 the upload named; nothing was kept: send the dump again from offset 0');
    }
    let dump: CoreDump;
    try {
      dump = readCoreDump(bytes);
    } catch (error) {
      if (error instanceof InvalidCoreDump) throw invalidArgument(`not a core dump the service can read: ${error.message}; nothing was kept`);
      throw error;
    }
    const { artifact, attribution } = await this.buildOf(request, dump);
    const storageKey = `coredumps/${request.projectId}/${sha256}`;
    await this.deps.storage.put(storageKey, Readable.from([bytes]));
    const crash: Crash = {
      id: randomUUID(),
      projectId: request.projectId,
      deviceId: request.deviceId,
      artifactId: artifact?.id ?? '',
      attribution,
      sha256,
      size: bytes.length,
      storageKey,
      chip: dump.chip,
      formatVersion: dump.formatVersion,
      elfSha256Prefix: dump.elfSha256Prefix,
      reason: dump.reason,
      panicDetails: dump.panicDetails,
      pc: dump.pc,
      task: '',
      inInterrupt: dump.inInterrupt,
      frames: [],
      decoding: 'queued',
      decodingNote: '',
      needsElf: false,
      groupId: null,
      receivedAt: this.now(),
      attempts: 0,
      leaseUntil: null,
    };
    if ((await this.deps.store.insertCrash(crash)) === 'duplicate') {
      // The same dump finished by a racing request: one crash, whichever stored it.
      return (await this.deps.store.findCrashByDump(request.projectId, request.deviceId, sha256)) ?? crash;
    }
    return crash;
  }

  /** The build whose ELF the dump names, else the one the device reported running. */
  private async buildOf(request: CoreDumpPiece, dump: CoreDump): Promise<{ artifact: Artifact | null; attribution: Crash['attribution'] }> {
    const builds = await this.deps.artifacts.listArtifacts(request.projectId);
    if (dump.elfSha256Prefix.length >= MIN_ELF_PREFIX_DIGITS) {
      const named = builds.filter((build) => build.image?.elfSha256.startsWith(dump.elfSha256Prefix) || build.elf?.sha256.startsWith(dump.elfSha256Prefix));
      // The same ELF released twice: the newest build of it.
      const newest = named.sort((a, b) => b.buildNumber - a.buildNumber)[0];
      if (newest) return { artifact: newest, attribution: 'elf_sha256' };
    }
    const reported = request.deviceBuildNumber > 0 ? builds.find((build) => build.buildNumber === request.deviceBuildNumber) : undefined;
    return reported ? { artifact: reported, attribution: 'device_build' } : { artifact: null, attribution: 'none' };
  }

  /** Decodes one queued crash, if there is one; answers whether there was. */
  async decodeNext(): Promise<boolean> {
    const now = this.now();
    const crash = await this.deps.store.claimDecode(now, new Date(now.getTime() + this.deps.leaseMs));
    if (!crash) return false;
    const decoded = await this.decode(crash);
    const group = groupOf(decoded);
    await this.deps.store.insertGroup(group);
    await this.deps.store.finishDecode({ ...decoded, groupId: group.id, leaseUntil: null });
    return true;
  }

  private async decode(crash: Crash): Promise<Crash> {
    const read = (decodingNote: string, needsElf = false): Crash => ({
      ...crash,
      decoding: 'read',
      decodingNote,
      needsElf,
      task: '',
      frames: crash.pc === null ? [] : [{ function: '', file: '', line: 0, address: crash.pc }],
    });
    const bytes = await readAll(await this.deps.storage.get(crash.storageKey));
    const dump = readCoreDump(bytes);
    if (!dump.coreElf) return read(`a dump in ESP-IDF's older binary format (${dump.formatVersion}): stored, not decoded; ESP-IDF's default ELF format is`);
    if (dump.architecture !== 'riscv') return read(`an ${dump.chip} (Xtensa) dump: stored and read, not unwound; the service's gdb unwinds RISC-V chips only`);
    if (!crash.artifactId) return read('no build of the project has the ELF SHA-256 the dump names, and the device reported none it runs');
    const artifact = await this.deps.artifacts.findArtifact(crash.artifactId);
    if (!artifact?.elf) return read(`build ${artifact?.buildNumber ?? '?'} has no ELF: upload it (PUT /projects/{id}/artifacts/{aid}/elf/) and its crashes are decoded`, true);

    const dir = await mkdtemp(join(this.deps.workDir, 'crash-'));
    try {
      const corePath = join(dir, 'core.elf');
      const appPath = join(dir, 'app.elf');
      await writeFile(corePath, dump.coreElf);
      await writeFile(appPath, await readAll(await this.deps.storage.get(artifact.elf.storageKey)));
      const { task, frames } = await this.deps.decoder.decode(corePath, appPath, dump.crashedTcb);
      if (frames.length === 0) return read('gdb found no frames for the crashed task');
      return { ...crash, decoding: 'decoded', decodingNote: '', needsElf: false, task, frames };
    } catch (error) {
      return read(`gdb could not unwind it: ${(error as Error).message}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Stores the ELF a build's image was made from (docs/api.md, "A build's ELF"), streamed through a
   * file: checked to be a 32-bit ELF, within `maxElfBytes`, and the very ELF the image names when
   * the image names one. The build's crashes that waited for it are queued to be decoded.
   */
  async putElf(projectId: string, artifactId: string, chunks: AsyncIterable<Buffer>, maxElfBytes: number): Promise<{ artifact: Artifact; changed: boolean; requeued: number }> {
    const artifact = await this.deps.artifacts.findArtifact(artifactId);
    if (!artifact || artifact.projectId !== projectId) throw notFound('no such artifact in this project');
    const dir = await mkdtemp(join(this.deps.workDir, 'elf-'));
    try {
      const path = join(dir, 'app.elf');
      const hash = createHash('sha256');
      let size = 0;
      let head = Buffer.alloc(0);
      const file = createWriteStream(path);
      for await (const chunk of chunks) {
        size += chunk.length;
        if (size > maxElfBytes) throw invalidArgument(`the ELF is larger than ${maxElfBytes} bytes (ELF_MAX_BYTES)`);
        if (head.length < 5) head = Buffer.concat([head, chunk.subarray(0, 5)]);
        hash.update(chunk);
        if (!file.write(chunk)) await once(file, 'drain');
      }
      file.end();
      await once(file, 'close');
      if (head.length < 5 || head.readUInt32BE(0) !== 0x7f454c46) throw invalidArgument('the body is not an ELF file: it does not start with 0x7F "ELF"');
      if (head[4] !== 1) throw invalidArgument('the ELF is not 32-bit: ESP32-class applications are');
      const sha256 = hash.digest('hex');
      const named = artifact.image?.elfSha256;
      if (named && named !== sha256) {
        throw invalidArgument(`this is not the ELF build ${artifact.buildNumber}'s image was made from: the image names SHA-256 ${named}, the body's is ${sha256}`);
      }
      if (artifact.elf?.sha256 === sha256) return { artifact, changed: false, requeued: 0 };
      if (artifact.elf) throw conflict(`build ${artifact.buildNumber} already has an ELF (SHA-256 ${artifact.elf.sha256}); a build's ELF is not replaced`);
      const storageKey = `elfs/${sha256}`;
      await this.deps.storage.put(storageKey, createReadStream(path));
      const stored = await this.deps.artifacts.setElf(projectId, artifactId, { sha256, size, storageKey, uploadedAt: this.now() });
      if (!stored) throw notFound('no such artifact in this project');
      return { artifact: stored, changed: true, requeued: await this.deps.store.requeueForElf(projectId, artifactId) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async listGroups(projectId: string, filter: { artifactId?: string; since?: Date }): Promise<CrashGroupSummary[]> {
    return this.deps.store.listGroups({ projectId, ...filter }, 500);
  }

  async getGroup(projectId: string, groupId: string, samples: number): Promise<{ group: CrashGroupSummary; samples: Crash[] }> {
    const [group] = await this.deps.store.listGroups({ projectId, groupId }, 1);
    if (!group) throw notFound('no such crash group in this project');
    return { group, samples: await this.deps.store.listCrashesOfGroup(groupId, Math.min(Math.max(samples, 1), 100)) };
  }

  /** Forgets pieces of dumps their devices never finished. */
  dropStaleUploads(olderThanMs: number): Promise<number> {
    return this.deps.store.dropUploadsStartedBefore(new Date(this.now().getTime() - olderThanMs));
  }
}

/** The group a crash belongs in: its build, its reason, and the frames below the panic machinery. */
export function groupOf(crash: Crash): CrashGroup {
  const named = crash.frames.filter((frame) => frame.function);
  const own = named.filter((frame) => !PANIC_MACHINERY.test(frame.function));
  const key = (own.length > 0 ? own : named).slice(0, SIGNATURE_FRAMES).map((frame) => frame.function);
  // Without names, the program counter is the best the dump says of where it crashed.
  const where = key.length > 0 ? key.join(' < ') : `pc 0x${(crash.pc ?? 0).toString(16).padStart(8, '0')}`;
  const signature = createHash('sha256').update(`${crash.reason}\n${where}`).digest('hex').slice(0, 16);
  return {
    id: createHash('sha256').update(`${crash.projectId}\n${crash.artifactId}\n${signature}`).digest('hex').slice(0, 24),
    projectId: crash.projectId,
    artifactId: crash.artifactId,
    signature,
    reason: crash.reason,
    frames: crash.frames,
    decoding: crash.decoding,
  };
}

function uploadId(projectId: string, deviceId: string, sha256: string): string {
  return createHash('sha256').update(`${projectId}\n${deviceId}\n${sha256}`).digest('hex').slice(0, 32);
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
