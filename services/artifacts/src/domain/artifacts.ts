import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { alreadyExists, invalidArgument, notFound } from '@ota/errors';
import { chipFamilyKey, EspImageReader, parseManifest, requirementsOf, type EspImage, type Manifest } from '@ota/manifest';
import { findSigningKey, parseEd25519PublicKey, type SigningKey } from './signing-keys';
import type { Artifact } from './model';
import { readRange } from './ranged-read';
import type { ArtifactEvents, ArtifactStore, BinaryStorage } from './ports';

export interface UploadHeader {
  projectId: string;
  ownerId: string;
  manifestJson: string;
  maxUploadsPerMonth: number;
  /** The project takes ESP-IDF application images only. */
  requireEspImage: boolean;
}

export interface ArtifactsDeps {
  store: ArtifactStore;
  storage: BinaryStorage;
  events: ArtifactEvents;
  /** Signed binaries are verified whole, in memory: this bounds how large one may be. */
  signedBinaryMaxBytes: number;
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
   * build number is taken by the final insert, so a failed upload never burns one.
   */
  async upload(header: UploadHeader, chunks: AsyncIterable<Buffer>): Promise<Artifact> {
    const manifest = parseManifest(header.manifestJson);
    const signingKeys = manifest.signature !== undefined ? await this.deps.store.listSigningKeys(header.projectId) : [];
    if (manifest.signature !== undefined && signingKeys.length === 0) {
      throw invalidArgument('the manifest carries a signature, but the project has no signing keys to verify it with');
    }
    const month = uploadMonth(this.now());
    const place = await this.deps.store.reserveUpload(header.ownerId, month, header.maxUploadsPerMonth);
    if (place === null) {
      throw invalidArgument(`monthly artifact upload limit of ${header.maxUploadsPerMonth} reached for the current plan`);
    }

    const id = randomUUID();
    const storageKey = `artifacts/${header.projectId}/${id}.bin`;
    const hash = createHash('sha256');
    // An ESP-IDF image is read as it streams past; bytes that are not one are stored as they are.
    const reader = new EspImageReader();
    let size = 0;
    // Ed25519 verifies the whole message, so a signed binary is also kept, up to its cap.
    const kept: Buffer[] | undefined = manifest.signature !== undefined ? [] : undefined;
    const { signedBinaryMaxBytes } = this.deps;
    const hashed = async function* () {
      for await (const chunk of chunks) {
        hash.update(chunk);
        reader.update(chunk);
        size += chunk.length;
        if (kept) {
          if (size > signedBinaryMaxBytes) throw invalidArgument(`a signed binary may be at most ${signedBinaryMaxBytes} bytes`);
          kept.push(chunk);
        }
        yield chunk;
      }
    };
    let signingKey: SigningKey | undefined;
    let image: EspImage | null;
    try {
      await this.deps.storage.put(storageKey, Readable.from(hashed()));
      if (size === 0) throw invalidArgument('binary is empty');
      image = reader.finish();
      if (!image && header.requireEspImage) {
        throw invalidArgument('this project takes ESP-IDF application images only (its require_esp_image setting), and the binary is not one: it does not start with 0xE9');
      }
      checkImageFitsManifest(image, manifest);
      if (kept) {
        signingKey = findSigningKey(Buffer.concat(kept), manifest.signature!, signingKeys);
        if (!signingKey) throw invalidArgument("the manifest signature does not verify against any of the project's signing keys");
      }
    } catch (error) {
      await this.deps.store.releaseUpload(header.ownerId, month, place);
      await this.deps.storage.delete(storageKey).catch(() => undefined);
      throw error;
    }

    const unnumbered = artifactOf(manifest, {
      id,
      projectId: header.projectId,
      checksumSha256: hash.digest('hex'),
      fileSize: size,
      storageKey,
      image,
      createdAt: this.now(),
    });
    if (signingKey) {
      unnumbered.signature = manifest.signature!;
      unnumbered.signingKeyId = signingKey.id;
    }
    const artifact = await this.deps.store.insertWithNextBuildNumber(unnumbered);
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

  async setArchived(projectId: string, artifactId: string, archived: boolean): Promise<{ artifact: Artifact; changed: boolean }> {
    const result = await this.deps.store.setArchived(projectId, artifactId, archived);
    if (!result) throw notFound('artifact not found');
    if (result.changed) this.deps.events.artifactChanged(result.artifact);
    return result;
  }

  async createSigningKey(projectId: string, name: string, publicKey: string): Promise<SigningKey> {
    if (!name.trim() || name.length > 100) throw invalidArgument('name must be 1 to 100 characters');
    const { pem, fingerprint } = parseEd25519PublicKey(publicKey);
    const key: SigningKey = { id: randomUUID(), projectId, name: name.trim(), publicKey: pem, fingerprint, createdAt: this.now() };
    if ((await this.deps.store.insertSigningKey(key)) === 'duplicate') throw alreadyExists('this public key is already a signing key of the project');
    return key;
  }

  listSigningKeys(projectId: string): Promise<SigningKey[]> {
    return this.deps.store.listSigningKeys(projectId);
  }

  async deleteSigningKey(projectId: string, keyId: string): Promise<void> {
    if (!(await this.deps.store.deleteSigningKey(projectId, keyId))) throw notFound('signing key not found');
  }

  /**
   * The binary's bytes from `offset`, `length` of them (0: to the end). Object storage reads only
   * that range, so a download resumed near its end costs only the bytes it still needs.
   */
  async readBinary(artifactId: string, offset = 0, length = 0): Promise<Readable> {
    const artifact = await this.get('', artifactId);
    return readRange(this.deps.storage, artifact.storageKey, artifact.fileSize, offset, length, 'binary');
  }
}

/** An image built for another chip than the manifest names would fail on every device that took it. */
function checkImageFitsManifest(image: EspImage | null, manifest: Manifest): void {
  if (image && chipFamilyKey(manifest.chip_family) !== image.chip) {
    throw invalidArgument(`the image is built for ${image.chip} (chip id ${image.chipId} in its header), but the manifest's chip_family is "${manifest.chip_family}"`);
  }
}

function artifactOf(
  manifest: Manifest,
  fields: Pick<Artifact, 'id' | 'projectId' | 'checksumSha256' | 'fileSize' | 'storageKey' | 'image' | 'createdAt'>,
): Omit<Artifact, 'buildNumber'> {
  return {
    ...fields,
    versionLabel: manifest.version_label,
    ...requirementsOf(manifest),
    releaseNotes: manifest.release_notes ?? '',
    archived: false,
    signature: '',
    signingKeyId: '',
    elf: null,
    sbom: null,
  };
}
