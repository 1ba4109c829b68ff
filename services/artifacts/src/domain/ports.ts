import type { Readable } from 'node:stream';
import type { Artifact } from './model';
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
