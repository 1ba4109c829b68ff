import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { invalidArgument, notFound } from '@ota/errors';
import { parseManifest, type Manifest } from './manifest';
import type { Artifact } from './model';
import type { ArtifactEvents, ArtifactStore, BinaryStorage } from './ports';

export interface UploadHeader {
  projectId: string;
  ownerId: string;
  manifestJson: string;
  maxUploadsPerMonth: number;
}

export interface ArtifactsDeps {
  store: ArtifactStore;
  storage: BinaryStorage;
  events: ArtifactEvents;
  now?: () => Date;
}

/** The upload month of the plan limit: the calendar month in UTC. */
export function uploadMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

export class Artifacts {
  private readonly now: () => Date;

  constructor(private readonly deps: ArtifactsDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Validates the manifest, takes a place under the monthly upload cap, streams the binary to
   * object storage while hashing it, then assigns the build number and stores the record. The
   * build number comes last so that a failed upload never burns one.
   */
  async upload(header: UploadHeader, chunks: AsyncIterable<Buffer>): Promise<Artifact> {
    const manifest = parseManifest(header.manifestJson);
    if (manifest.signature !== undefined) {
      // Verification needs the project's signing keys, which this service does not hold yet.
      throw invalidArgument('manifest signature cannot be verified: the project has no signing keys');
    }
    const month = uploadMonth(this.now());
    if (!(await this.deps.store.reserveUpload(header.ownerId, month, header.maxUploadsPerMonth))) {
      throw invalidArgument(`monthly artifact upload limit of ${header.maxUploadsPerMonth} reached for the current plan`);
    }

    const id = randomUUID();
    const storageKey = `artifacts/${header.projectId}/${id}.bin`;
    const hash = createHash('sha256');
    let size = 0;
    const hashed = async function* () {
      for await (const chunk of chunks) {
        hash.update(chunk);
        size += chunk.length;
        yield chunk;
      }
    };
    try {
      await this.deps.storage.put(storageKey, Readable.from(hashed()));
      if (size === 0) throw invalidArgument('binary is empty');
    } catch (error) {
      await this.deps.store.releaseUpload(header.ownerId, month);
      await this.deps.storage.delete(storageKey).catch(() => undefined);
      throw error;
    }

    const artifact = artifactOf(manifest, {
      id,
      projectId: header.projectId,
      buildNumber: await this.deps.store.nextBuildNumber(header.projectId),
      checksumSha256: hash.digest('hex'),
      fileSize: size,
      storageKey,
      createdAt: this.now(),
    });
    await this.deps.store.insertArtifact(artifact);
    this.deps.events.artifactChanged(artifact);
    return artifact;
  }

  async get(projectId: string, artifactId: string): Promise<Artifact> {
    const artifact = await this.deps.store.findArtifact(artifactId);
    if (!artifact || (projectId && artifact.projectId !== projectId)) throw notFound('artifact not found');
    return artifact;
  }

  list(projectId?: string): Promise<Artifact[]> {
    return this.deps.store.listArtifacts(projectId);
  }

  async readBinary(artifactId: string): Promise<Readable> {
    const artifact = await this.get('', artifactId);
    return this.deps.storage.get(artifact.storageKey);
  }
}

function artifactOf(
  manifest: Manifest,
  fields: Pick<Artifact, 'id' | 'projectId' | 'buildNumber' | 'checksumSha256' | 'fileSize' | 'storageKey' | 'createdAt'>,
): Artifact {
  return {
    ...fields,
    versionLabel: manifest.version_label,
    framework: manifest.framework,
    chipFamily: manifest.chip_family,
    boardId: manifest.board_id ?? '',
    hardwareRevision: manifest.hardware_revision ?? '',
    partitionProfile: manifest.partition_profile ?? '',
    minNvsSchemaVersion: manifest.min_nvs_schema_version ?? null,
    securityMode: manifest.security_mode ?? '',
    releaseNotes: manifest.release_notes ?? '',
    archived: false,
    signature: '',
    signingKeyId: '',
  };
}
