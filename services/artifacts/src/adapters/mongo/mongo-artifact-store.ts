import { insertUnique, insertWithNextNumber, releasePlace, takePlace, type PlaceDoc } from '@ota/mongo';
import { requirementFields, requirementsOf, type BuildRequirementFields } from '@ota/manifest';
import { Schema, type Connection } from 'mongoose';
import type { Artifact } from '../../domain/model';
import type { ArtifactStore } from '../../domain/ports';
import type { SigningKey } from '../../domain/signing-keys';

interface ArtifactDoc extends BuildRequirementFields {
  _id: string;
  project_id: string;
  build_number: number;
  version_label: string;
  release_notes: string;
  checksum_sha256: string;
  file_size: number;
  archived: boolean;
  signature: string;
  signing_key_id: string;
  storage_key: string;
  created_at: Date;
}

interface SigningKeyDoc {
  _id: string;
  project_id: string;
  name: string;
  public_key: string;
  fingerprint: string;
  created_at: Date;
}


const options = { versionKey: false as const, strict: 'throw' as const };

export function registerArtifactModels(connection: Connection) {
  const artifactSchema = new Schema<ArtifactDoc>(
    {
      _id: String,
      project_id: { type: String, required: true },
      build_number: { type: Number, required: true },
      version_label: String,
      framework: String,
      chip_family: String,
      board_id: String,
      hardware_revision: String,
      partition_profile: String,
      min_nvs_schema_version: { type: Number, default: null },
      security_mode: String,
      release_notes: String,
      checksum_sha256: String,
      file_size: Number,
      archived: Boolean,
      signature: String,
      signing_key_id: String,
      storage_key: String,
      created_at: Date,
    },
    options,
  );
  artifactSchema.index({ project_id: 1, build_number: 1 }, { unique: true });
  const placeSchema = new Schema<PlaceDoc>({ _id: String, scope: String, place: Number }, options);
  placeSchema.index({ scope: 1 });
  const signingKeySchema = new Schema<SigningKeyDoc>(
    { _id: String, project_id: String, name: String, public_key: String, fingerprint: String, created_at: Date },
    options,
  );
  signingKeySchema.index({ project_id: 1, fingerprint: 1 }, { unique: true });
  return {
    SigningKey: connection.model<SigningKeyDoc>('SigningKey', signingKeySchema, 'signing_keys'),
    Artifact: connection.model<ArtifactDoc>('Artifact', artifactSchema, 'artifacts'),
    // Per owner and UTC month: one place per upload counted against the plan.
    UploadPlace: connection.model<PlaceDoc>('UploadPlace', placeSchema, 'upload_places'),
  };
}

type ArtifactModels = ReturnType<typeof registerArtifactModels>;

export class MongoArtifactStore implements ArtifactStore {
  constructor(private readonly models: ArtifactModels) {}

  async reserveUpload(ownerId: string, month: string, cap: number): Promise<number | null> {
    return takePlace(this.models.UploadPlace.collection as never, `${ownerId}:${month}`, cap);
  }

  async releaseUpload(ownerId: string, month: string, place: number): Promise<void> {
    await releasePlace(this.models.UploadPlace.collection as never, `${ownerId}:${month}`, place);
  }

  async insertWithNextBuildNumber(artifact: Omit<Artifact, 'buildNumber'>): Promise<Artifact> {
    const { build_number: _unset, ...doc } = docOf({ ...artifact, buildNumber: 0 });
    const buildNumber = await insertWithNextNumber<ArtifactDoc>(
      this.models.Artifact.collection as never,
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

  async setArchived(projectId: string, artifactId: string, archived: boolean): Promise<{ artifact: Artifact; changed: boolean } | null> {
    const result = await this.models.Artifact.collection.updateOne({ _id: artifactId, project_id: projectId } as never, { $set: { archived } });
    if (result.matchedCount === 0) return null;
    const artifact = await this.findArtifact(artifactId);
    return artifact ? { artifact, changed: result.modifiedCount > 0 } : null;
  }

  async insertSigningKey(key: SigningKey): Promise<'inserted' | 'duplicate'> {
    const inserted = await insertUnique(this.models.SigningKey.collection, {
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
    createdAt: doc.created_at,
  };
}
