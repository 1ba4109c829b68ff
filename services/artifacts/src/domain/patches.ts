import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { invalidArgument, notFound } from '@ota/errors';
import type { Artifact, Patch } from './model';
import { readRange } from './ranged-read';
import type { ArtifactStore, BinaryStorage, PatchMaker, PatchOutcome, PatchStore } from './ports';

export interface PatchesDeps {
  artifacts: Pick<ArtifactStore, 'findArtifact' | 'findArtifactByChecksum'>;
  patches: PatchStore;
  storage: BinaryStorage;
  maker: PatchMaker;
  /** Where a job keeps its base, target, patch and applied files while it runs. */
  workDir: string;
  /** Builds larger than this are not patched (the maker holds them in memory). */
  maxImageBytes: number;
  /** How long a job is a worker's before another may take it over. */
  leaseMs: number;
  now?: () => Date;
}

/** Takes after which a job whose workers keep stopping (a crash, a kill) is given up. */
export const PATCH_MAX_ATTEMPTS = 3;

/** Where a patch's bytes live: by its base and target bytes and its format, whatever the project. */
export function patchStorageKey(format: string, baseSha256: string, targetSha256: string): string {
  return `patches/${format}/${baseSha256}-${targetSha256}.patch`;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/**
 * Delta patches between builds of a project (docs/api.md, "Delta patches"). A request queues a
 * job; workers (`buildNext`) make each patch, apply it back with an independent implementation,
 * and publish it only when that gave the target's SHA-256. Nothing here runs on the check path.
 */
export class Patches {
  private readonly now: () => Date;

  constructor(private readonly deps: PatchesDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  get format(): string {
    return this.deps.maker.format;
  }

  /** Queues the patch from `baseArtifactId` to `targetArtifactId`, or answers the one already asked for. */
  async request(projectId: string, targetArtifactId: string, baseArtifactId: string): Promise<Patch> {
    const target = await this.artifactOf(projectId, targetArtifactId, 'the target build');
    const base = await this.artifactOf(projectId, baseArtifactId, 'base_artifact_id');
    if (base.checksumSha256 === target.checksumSha256) throw invalidArgument('the base build has the same bytes as the target: there is nothing to patch');
    const format = this.deps.maker.format;
    const now = this.now();
    return this.deps.patches.insertPatchJob({
      id: `${projectId}:${base.checksumSha256}:${target.checksumSha256}:${format}`,
      projectId,
      baseArtifactId: base.id,
      targetArtifactId: target.id,
      baseSha256: base.checksumSha256,
      targetSha256: target.checksumSha256,
      format,
      state: 'queued',
      reason: '',
      size: 0,
      sha256: '',
      storageKey: patchStorageKey(format, base.checksumSha256, target.checksumSha256),
      attempts: 0,
      createdAt: now,
      updatedAt: now,
      leaseUntil: null,
    });
  }

  /**
   * The patch an offer of `targetArtifactId` to a device running bytes `baseSha256` may carry, in
   * `format`: the one asked for before, or, when the base is a build of the project, one asked for
   * now (queued; a later check finds it ready). Null when none can be. An empty format is the one
   * the service makes.
   */
  async forOffer(projectId: string, targetArtifactId: string, baseSha256: string, requestedFormat: string): Promise<Patch | null> {
    const format = requestedFormat || this.deps.maker.format;
    if (format !== this.deps.maker.format || !/^[0-9a-f]{64}$/.test(baseSha256)) return null;
    const target = await this.deps.artifacts.findArtifact(targetArtifactId);
    if (!target || target.projectId !== projectId || target.checksumSha256 === baseSha256) return null;
    const asked = await this.deps.patches.findPatch(`${projectId}:${baseSha256}:${target.checksumSha256}:${format}`);
    if (asked) return asked;
    const base = await this.deps.artifacts.findArtifactByChecksum(projectId, baseSha256);
    return base ? this.request(projectId, target.id, base.id) : null;
  }

  /** The bytes of the ready patch to `targetArtifactId` from the build with `baseSha256`, or a range of them. */
  async read(targetArtifactId: string, baseSha256: string, offset: number, length: number): Promise<Readable> {
    const target = await this.deps.artifacts.findArtifact(targetArtifactId);
    if (!target) throw notFound('artifact not found');
    const patch = await this.deps.patches.findPatch(`${target.projectId}:${baseSha256}:${target.checksumSha256}:${this.deps.maker.format}`);
    if (!patch || patch.state !== 'ready') throw notFound('no ready patch to this build from that base');
    return readRange(this.deps.storage, patch.storageKey, patch.size, offset, length, 'patch');
  }

  async list(projectId: string, targetArtifactId: string): Promise<Patch[]> {
    await this.artifactOf(projectId, targetArtifactId, 'the target build');
    return this.deps.patches.listPatches(projectId, targetArtifactId);
  }

  /** Does one waiting job, if there is one: answers whether there was. */
  async buildNext(): Promise<boolean> {
    const now = this.now();
    const job = await this.deps.patches.claimPatchJob(now, new Date(now.getTime() + this.deps.leaseMs));
    if (!job) return false;
    const outcome: PatchOutcome =
      job.attempts > PATCH_MAX_ATTEMPTS
        ? { state: 'failed', reason: `its workers stopped ${PATCH_MAX_ATTEMPTS} times before it was made` }
        : await this.build(job).catch((error: unknown) => ({ state: 'failed' as const, reason: `the patch could not be made: ${(error as Error).message}` }));
    await this.deps.patches.finishPatchJob(job.id, outcome, this.now());
    return true;
  }

  private async artifactOf(projectId: string, artifactId: string, what: string): Promise<Artifact> {
    const artifact = await this.deps.artifacts.findArtifact(artifactId);
    if (!artifact || artifact.projectId !== projectId) {
      if (what === 'the target build') throw notFound('artifact not found');
      throw invalidArgument(`${what} names no build of this project`);
    }
    return artifact;
  }

  private async build(job: Patch): Promise<PatchOutcome> {
    const base = await this.deps.artifacts.findArtifact(job.baseArtifactId);
    const target = await this.deps.artifacts.findArtifact(job.targetArtifactId);
    if (!base || !target) return { state: 'failed', reason: 'a build it is made from no longer exists' };
    const largest = Math.max(base.fileSize, target.fileSize);
    if (largest > this.deps.maxImageBytes) return { state: 'failed', reason: `a build of ${largest} bytes is over PATCH_MAX_IMAGE_BYTES (${this.deps.maxImageBytes})` };
    const dir = await mkdtemp(join(this.deps.workDir, 'patch-'));
    try {
      const [basePath, targetPath, patchPath] = ['base.bin', 'target.bin', 'patch.bin'].map((name) => join(dir, name)) as [string, string, string];
      await pipeline(await this.deps.storage.get(base.storageKey), createWriteStream(basePath));
      await pipeline(await this.deps.storage.get(target.storageKey), createWriteStream(targetPath));
      const { appliedSha256 } = await this.deps.maker.make(basePath, targetPath, patchPath);
      if (appliedSha256 !== job.targetSha256) {
        return { state: 'failed', reason: `applied to its base, the patch gave bytes of SHA-256 ${appliedSha256}, not the target's ${job.targetSha256}` };
      }
      const sha256 = await sha256Of(patchPath);
      const { size } = await stat(patchPath);
      await this.deps.storage.put(job.storageKey, createReadStream(patchPath));
      return { state: 'ready', size, sha256 };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
