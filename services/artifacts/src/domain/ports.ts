import type { SbomComponent } from './sbom';
import type { Readable } from 'node:stream';
import type { Artifact, ArtifactElf, Patch, ArtifactSbom } from './model';
import type { CoreDumpUpload, Crash, CrashFrame, CrashGroup, CrashGroupSummary } from './crash-model';
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
  /** Records the build's ELF; null when the project has no such build. */
  setElf(projectId: string, artifactId: string, elf: ArtifactElf): Promise<Artifact | null>;
  /** Records the build's SBOM unless it has one: false when it had one already (or has no such build). */
  setSbomOnce(projectId: string, artifactId: string, sbom: ArtifactSbom): Promise<boolean>;

  insertSigningKey(key: SigningKey): Promise<'inserted' | 'duplicate'>;
  listSigningKeys(projectId: string): Promise<SigningKey[]>;
  deleteSigningKey(projectId: string, keyId: string): Promise<boolean>;
}

/** The components of each build's SBOM, indexed for the searches of exposure (docs/api.md, "SBOMs"). */
export interface SbomComponentStore {
  /** Stores the components of one document of one build; storing them again changes nothing. */
  insertComponents(projectId: string, artifactId: string, sbomSha256: string, components: SbomComponent[]): Promise<void>;
  /** Forgets the components of a document the build did not keep. */
  deleteComponents(artifactId: string, sbomSha256: string): Promise<void>;
  /** The project's components named so, of any document (the caller keeps the builds' own), at most `limit`. */
  findComponents(projectId: string, by: ComponentQuery, limit: number): Promise<StoredSbomComponent[]>;
}

/** One of the three ways to name a component: exactly, by purl without its version, by CPE vendor and product. */
export type ComponentQuery = { name: string } | { purl: string } | { cpe: string };

export interface StoredSbomComponent extends SbomComponent {
  artifactId: string;
  sbomSha256: string;
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

export interface CrashStore {
  /** The upload of this dump by this device, started if there was none. */
  openUpload(upload: CoreDumpUpload): Promise<CoreDumpUpload>;
  /**
   * Stores a piece at `offset` unless one is there (the first writer of an offset keeps it);
   * answers how many bytes from the start the upload now holds without a gap.
   */
  addPiece(uploadId: string, offset: number, piece: Buffer): Promise<number>;
  /** Bytes held from the start without a gap. */
  receivedOf(uploadId: string): Promise<number>;
  /** The pieces from the start, joined. */
  piecesOf(uploadId: string): Promise<Buffer>;
  dropUpload(uploadId: string): Promise<void>;
  /** Drops uploads started before `before`: a device that never finished. */
  dropUploadsStartedBefore(before: Date): Promise<number>;

  insertCrash(crash: Crash): Promise<'inserted' | 'duplicate'>;
  findCrashByDump(projectId: string, deviceId: string, sha256: string): Promise<Crash | null>;
  countCrashesSince(projectId: string, deviceId: string, since: Date): Promise<number>;
  /** Takes the oldest queued crash, or one whose decode lease ran out, for one worker. */
  claimDecode(now: Date, leaseUntil: Date): Promise<Crash | null>;
  finishDecode(crash: Crash): Promise<void>;
  /** Queues the build's crashes that waited for its ELF; answers how many. */
  requeueForElf(projectId: string, artifactId: string): Promise<number>;

  /** Stores the group unless it exists (its id is made from its project, build and signature). */
  insertGroup(group: CrashGroup): Promise<void>;
  findGroup(projectId: string, groupId: string): Promise<CrashGroup | null>;
  /** Groups with crashes matching the filter, with their counts within it; most recent first. */
  listGroups(filter: CrashFilter, limit: number): Promise<CrashGroupSummary[]>;
  listCrashesOfGroup(groupId: string, limit: number): Promise<Crash[]>;
}

export interface CrashFilter {
  projectId: string;
  artifactId?: string;
  since?: Date;
  groupId?: string;
}

/** Unwinds a core file against the application's ELF (a debugger, run as a separate process). */
export interface CrashDecoder {
  decode(coreElfPath: string, appElfPath: string, crashedTcb: number | null): Promise<{ task: string; frames: CrashFrame[] }>;
}
