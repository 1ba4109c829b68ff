import type { Readable } from 'node:stream';
import type { Artifact, Patch } from './model';
import type { SigningKey } from './signing-keys';

export interface ArtifactStore {
  /**
   * Takes a place for one upload of the owner in `month` unless `cap` places are taken (0: no
   * cap). Returns the place to give back with releaseUpload, or null at the cap.
   */
  reserveUpload(ownerId: string, month: string, cap: number): Promise<number | null>;
  releaseUpload(ownerId: string, month: string, place: number): Promise<void>;
  /**
   * Stores the artifact under the project's next build number (1, 2, 3, ...), which it assigns:
   * never shared and never skipped, even when uploads finish at the same moment.
   */
  insertWithNextBuildNumber(artifact: Omit<Artifact, 'buildNumber'>): Promise<Artifact>;
  findArtifact(id: string): Promise<Artifact | null>;
  /** A build of the project with these bytes (the oldest, when several have them). */
  findArtifactByChecksum(projectId: string, checksumSha256: string): Promise<Artifact | null>;
  listArtifacts(projectId?: string): Promise<Artifact[]>;
  /** Sets the flag; returns the artifact and whether it changed, or null when it does not exist. */
  setArchived(projectId: string, artifactId: string, archived: boolean): Promise<{ artifact: Artifact; changed: boolean } | null>;

  insertSigningKey(key: SigningKey): Promise<'inserted' | 'duplicate'>;
  listSigningKeys(projectId: string): Promise<SigningKey[]>;
  deleteSigningKey(projectId: string, keyId: string): Promise<boolean>;
}

/** Bytes `start` to `end` of a binary, both inclusive. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BinaryStorage {
  /** Stores the stream under `key`; memory stays bounded by one part, whatever the size. */
  put(key: string, body: Readable): Promise<void>;
  /** The object's bytes, or only those of `range` (both ends inclusive, as HTTP counts them). */
  get(key: string, range?: ByteRange): Promise<Readable>;
  delete(key: string): Promise<void>;
}

export interface ArtifactEvents {
  artifactChanged(artifact: Artifact): void;
}

export interface PatchStore {
  /** Stores the job unless a patch of its id exists; answers the stored patch either way. */
  insertPatchJob(patch: Patch): Promise<Patch>;
  findPatch(id: string): Promise<Patch | null>;
  listPatches(projectId: string, targetArtifactId: string): Promise<Patch[]>;
  /**
   * Takes the oldest queued job, or a building one whose lease ran out (its worker stopped), for
   * one worker: it becomes `building` until `leaseUntil`. Two workers never take the same job.
   */
  claimPatchJob(now: Date, leaseUntil: Date): Promise<Patch | null>;
  /** The end of a job that `claimPatchJob` gave out. */
  finishPatchJob(id: string, outcome: PatchOutcome, now: Date): Promise<void>;
}

export type PatchOutcome = { state: 'ready'; size: number; sha256: string } | { state: 'failed'; reason: string };

/** Makes patches with one tool and checks them with another apply. */
export interface PatchMaker {
  /** The format it makes, as offers name it. */
  readonly format: string;
  /**
   * Makes the patch from `basePath` to `targetPath` at `patchPath`, then applies it to the base
   * with an independent implementation: answers the SHA-256 of what that apply produced.
   */
  make(basePath: string, targetPath: string, patchPath: string): Promise<{ appliedSha256: string }>;
}
