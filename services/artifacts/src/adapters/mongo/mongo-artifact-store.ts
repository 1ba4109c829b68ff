import { collectionOf, insertUnique, insertWithNextNumber, releasePlace, takePlace } from '@ota/mongo';
import { imageFields, imageOf, requirementFields, requirementsOf } from '@ota/manifest';
import type { Artifact, ArtifactElf, ArtifactSbom } from '../../domain/model';
import type { ArtifactStore } from '../../domain/ports';
import type { SigningKey } from '../../domain/signing-keys';
import type { ArtifactDoc, ArtifactModels, SigningKeyDoc } from './models';

export class MongoArtifactStore implements ArtifactStore {
  constructor(private readonly models: ArtifactModels) {}

  async reserveUpload(ownerId: string, month: string, cap: number): Promise<number | null> {
    return takePlace(collectionOf(this.models.UploadPlace), `${ownerId}:${month}`, cap);
  }

  async releaseUpload(ownerId: string, month: string, place: number): Promise<void> {
    await releasePlace(collectionOf(this.models.UploadPlace), `${ownerId}:${month}`, place);
  }

  async insertWithNextBuildNumber(artifact: Omit<Artifact, 'buildNumber'>): Promise<Artifact> {
    const { build_number: _unset, ...doc } = docOf({ ...artifact, buildNumber: 0 });
    const buildNumber = await insertWithNextNumber<ArtifactDoc>(
      collectionOf(this.models.Artifact),
      { project_id: artifact.projectId },
      'build_number',
      doc,
    );
    return { ...artifact, buildNumber };
  }

  async findArtifact(id: string): Promise<Artifact | null> {
    const doc = await this.models.Artifact.findById(id).lean<ArtifactDoc>();
    return doc ? artifactOf(doc) : null;
  }

  async findArtifactByChecksum(projectId: string, checksumSha256: string): Promise<Artifact | null> {
    const doc = await this.models.Artifact.findOne({ project_id: projectId, checksum_sha256: checksumSha256 }).sort({ build_number: 1 }).lean<ArtifactDoc>();
    return doc ? artifactOf(doc) : null;
  }

  async setArchived(projectId: string, artifactId: string, archived: boolean): Promise<{ artifact: Artifact; changed: boolean } | null> {
    const result = await collectionOf(this.models.Artifact).updateOne({ _id: artifactId, project_id: projectId }, { $set: { archived } });
    if (result.matchedCount === 0) return null;
    const artifact = await this.findArtifact(artifactId);
    return artifact ? { artifact, changed: result.modifiedCount > 0 } : null;
  }

  async setElf(projectId: string, artifactId: string, elf: ArtifactElf): Promise<Artifact | null> {
    const result = await collectionOf(this.models.Artifact).updateOne({ _id: artifactId, project_id: projectId }, { $set: { elf: elfFields(elf) } });
    return result.matchedCount === 0 ? null : this.findArtifact(artifactId);
  }

  async setSbomOnce(projectId: string, artifactId: string, sbom: ArtifactSbom): Promise<boolean> {
    // FerretDB's filtered updates are not atomic between clients: a unique insert decides.
    if (!(await insertUnique(collectionOf(this.models.SbomClaim), { _id: artifactId, sha256: sbom.sha256 }))) {
      const claim = await this.models.SbomClaim.findById(artifactId).lean<{ sha256: string }>();
      if (claim?.sha256 !== sbom.sha256) return false;
    }
    const result = await collectionOf(this.models.Artifact).updateOne({ _id: artifactId, project_id: projectId }, { $set: { sbom: sbomFields(sbom) } });
    return result.matchedCount === 1;
  }

  async insertSigningKey(key: SigningKey): Promise<'inserted' | 'duplicate'> {
    const inserted = await insertUnique(collectionOf(this.models.SigningKey), {
      _id: key.id,
      project_id: key.projectId,
      name: key.name,
      public_key: key.publicKey,
      fingerprint: key.fingerprint,
      created_at: key.createdAt,
    } satisfies SigningKeyDoc);
    return inserted ? 'inserted' : 'duplicate';
  }

  async listSigningKeys(projectId: string): Promise<SigningKey[]> {
    const docs = await this.models.SigningKey.find({ project_id: projectId }).sort({ created_at: 1, _id: 1 }).lean<SigningKeyDoc[]>();
    return docs.map((doc) => ({
      id: doc._id,
      projectId: doc.project_id,
      name: doc.name,
      publicKey: doc.public_key,
      fingerprint: doc.fingerprint,
      createdAt: doc.created_at,
    }));
  }

  async deleteSigningKey(projectId: string, keyId: string): Promise<boolean> {
    const result = await this.models.SigningKey.deleteOne({ _id: keyId, project_id: projectId });
    return result.deletedCount > 0;
  }

  async listArtifacts(projectId?: string): Promise<Artifact[]> {
    const filter = projectId ? { project_id: projectId } : {};
    const docs = await this.models.Artifact.find(filter).sort({ project_id: 1, build_number: -1 }).lean<ArtifactDoc[]>();
    return docs.map(artifactOf);
  }
}

function docOf(artifact: Artifact): ArtifactDoc {
  return {
    _id: artifact.id,
    project_id: artifact.projectId,
    build_number: artifact.buildNumber,
    version_label: artifact.versionLabel,
    ...requirementFields(artifact),
    release_notes: artifact.releaseNotes,
    checksum_sha256: artifact.checksumSha256,
    file_size: artifact.fileSize,
    archived: artifact.archived,
    signature: artifact.signature,
    signing_key_id: artifact.signingKeyId,
    storage_key: artifact.storageKey,
    image: artifact.image && imageFields(artifact.image),
    elf: artifact.elf && elfFields(artifact.elf),
    sbom: artifact.sbom && sbomFields(artifact.sbom),
    created_at: artifact.createdAt,
  };
}

function artifactOf(doc: ArtifactDoc): Artifact {
  return {
    id: doc._id,
    projectId: doc.project_id,
    buildNumber: doc.build_number,
    versionLabel: doc.version_label,
    ...requirementsOf(doc),
    releaseNotes: doc.release_notes ?? '',
    checksumSha256: doc.checksum_sha256,
    fileSize: doc.file_size,
    archived: doc.archived ?? false,
    signature: doc.signature ?? '',
    signingKeyId: doc.signing_key_id ?? '',
    storageKey: doc.storage_key,
    image: doc.image ? imageOf(doc.image) : null,
    elf: doc.elf ? { sha256: doc.elf.sha256, size: doc.elf.size, storageKey: doc.elf.storage_key, uploadedAt: doc.elf.uploaded_at } : null,
    sbom: doc.sbom
      ? { sha256: doc.sbom.sha256, size: doc.sbom.size, format: doc.sbom.format, components: doc.sbom.components, storageKey: doc.sbom.storage_key, uploadedAt: doc.sbom.uploaded_at }
      : null,
    createdAt: doc.created_at,
  };
}

const elfFields = (elf: ArtifactElf) => ({ sha256: elf.sha256, size: elf.size, storage_key: elf.storageKey, uploaded_at: elf.uploadedAt });
const sbomFields = (sbom: ArtifactSbom) => ({ sha256: sbom.sha256, size: sbom.size, format: sbom.format, components: sbom.components, storage_key: sbom.storageKey, uploaded_at: sbom.uploadedAt });
