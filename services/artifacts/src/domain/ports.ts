import type { Readable } from 'node:stream';
import type { Artifact } from './model';
import type { SigningKey } from './signing-keys';

export interface ArtifactStore {
  /** Takes the next build number of a project: 1, 2, 3, ... never shared, even concurrently. */
  nextBuildNumber(projectId: string): Promise<number>;
  /** Counts one upload for the owner in `month` unless that reaches `cap` (0: no cap). */
  reserveUpload(ownerId: string, month: string, cap: number): Promise<boolean>;
  releaseUpload(ownerId: string, month: string): Promise<void>;
  insertArtifact(artifact: Artifact): Promise<void>;
  findArtifact(id: string): Promise<Artifact | null>;
  listArtifacts(projectId?: string): Promise<Artifact[]>;
  /** Sets the flag; returns the artifact and whether it changed, or null when it does not exist. */
  setArchived(projectId: string, artifactId: string, archived: boolean): Promise<{ artifact: Artifact; changed: boolean } | null>;

  insertSigningKey(key: SigningKey): Promise<'inserted' | 'duplicate'>;
  listSigningKeys(projectId: string): Promise<SigningKey[]>;
  deleteSigningKey(projectId: string, keyId: string): Promise<boolean>;
}

export interface BinaryStorage {
  /** Stores the stream under `key`; memory stays bounded by one part, whatever the size. */
  put(key: string, body: Readable): Promise<void>;
  get(key: string): Promise<Readable>;
  delete(key: string): Promise<void>;
}

export interface ArtifactEvents {
  artifactChanged(artifact: Artifact): void;
}
