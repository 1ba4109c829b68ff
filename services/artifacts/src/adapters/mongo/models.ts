import type { BuildRequirementFields, EspImageFields } from '@ota/manifest';
import type { PlaceDoc } from '@ota/mongo';
import { Schema, type Connection } from 'mongoose';

// The artifacts service's documents. Field names are snake_case: they are what an operator sees in the database.

export interface ArtifactDoc extends BuildRequirementFields {
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
  /** Absent on a build stored before images were read, null for bytes that are not an image. */
  image?: EspImageFields | null;
  created_at: Date;
}

export interface SigningKeyDoc {
  _id: string;
  project_id: string;
  name: string;
  public_key: string;
  fingerprint: string;
  created_at: Date;
}

export interface PatchDoc {
  _id: string;
  project_id: string;
  base_artifact_id: string;
  target_artifact_id: string;
  base_sha256: string;
  target_sha256: string;
  format: string;
  state: string;
  reason: string;
  size: number;
  sha256: string;
  storage_key: string;
  attempts: number;
  created_at: Date;
  updated_at: Date;
  lease_until: Date | null;
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
      image: { type: Schema.Types.Mixed, default: null },
      created_at: Date,
    },
    options,
  );
  artifactSchema.index({ project_id: 1, build_number: 1 }, { unique: true });
  // The build a device runs, by the SHA-256 it reports: the base of the patch its offer carries.
  artifactSchema.index({ project_id: 1, checksum_sha256: 1 });
  const placeSchema = new Schema<PlaceDoc>({ _id: String, scope: String, place: Number }, options);
  placeSchema.index({ scope: 1 });
  const signingKeySchema = new Schema<SigningKeyDoc>(
    { _id: String, project_id: String, name: String, public_key: String, fingerprint: String, created_at: Date },
    options,
  );
  signingKeySchema.index({ project_id: 1, fingerprint: 1 }, { unique: true });
  const patchSchema = new Schema<PatchDoc>(
    {
      _id: String,
      project_id: String,
      base_artifact_id: String,
      target_artifact_id: String,
      base_sha256: String,
      target_sha256: String,
      format: String,
      state: String,
      reason: String,
      size: Number,
      sha256: String,
      storage_key: String,
      attempts: Number,
      created_at: Date,
      updated_at: Date,
      lease_until: { type: Date, default: null },
    },
    options,
  );
  patchSchema.index({ project_id: 1, target_artifact_id: 1 });
  // What a worker looks for: the oldest waiting job.
  patchSchema.index({ state: 1, created_at: 1 });
  return {
    Patch: connection.model<PatchDoc>('Patch', patchSchema, 'patches'),
    // One document per attempt at a job, `<patch id>#<attempt>`: the unique _id decides which
    // worker has it (FerretDB v1's find-and-modify is not atomic between two clients).
    PatchClaim: connection.model<{ _id: string; claimed_at: Date }>('PatchClaim', new Schema({ _id: String, claimed_at: Date }, options), 'patch_claims'),
    SigningKey: connection.model<SigningKeyDoc>('SigningKey', signingKeySchema, 'signing_keys'),
    Artifact: connection.model<ArtifactDoc>('Artifact', artifactSchema, 'artifacts'),
    // Per owner and UTC month: one place per upload counted against the plan.
    UploadPlace: connection.model<PlaceDoc>('UploadPlace', placeSchema, 'upload_places'),
  };
}

export type ArtifactModels = ReturnType<typeof registerArtifactModels>;
