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
  /** Absent or null until CI uploads the build's ELF. */
  elf?: { sha256: string; size: number; storage_key: string; uploaded_at: Date } | null;
  /** Absent or null until CI uploads the build's SBOM. */
  sbom?: { sha256: string; size: number; format: string; components: number; storage_key: string; uploaded_at: Date } | null;
  created_at: Date;
}

/** A vulnerability the project recorded (vulnerabilities.ts); `_id` is `${project}:${advisory}`. */
export interface VulnerabilityDoc {
  _id: string;
  project_id: string;
  advisory_id: string;
  component: { name: string; purl: string; cpe: string };
  versions: string;
  summary: string;
  known_at: Date;
  recorded_at: Date;
  /** As it was when recorded; never updated. */
  exposure: { builds: Array<{ artifact_id: string; build_number: number; component_version: string; devices: number }>; devices: number };
}

/** A build's VEX statement on a vulnerability, apart from the SBOMs; `_id` is `${project}:${advisory}:${artifact}`. */
export interface VexStatementDoc {
  _id: string;
  project_id: string;
  advisory_id: string;
  artifact_id: string;
  build_number: number;
  status: string;
  justification: string;
  note: string;
  stated_at: Date;
}

/** One component of one SBOM of one build; `_id` is `${artifact}:${sbom sha256}:${index}`. */
export interface SbomComponentDoc {
  _id: string;
  project_id: string;
  artifact_id: string;
  sbom_sha256: string;
  name: string;
  /** The name in lower case: searches ignore case. */
  name_key: string;
  version: string;
  purl: string;
  cpes: string[];
  supplier: string;
  hashes: Array<{ algorithm: string; value: string }>;
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

export interface CrashFrameDoc {
  function: string;
  file: string;
  line: number;
  address: number;
}

export interface CrashDoc {
  _id: string;
  project_id: string;
  device_id: string;
  artifact_id: string;
  attribution: string;
  sha256: string;
  size: number;
  storage_key: string;
  chip: string;
  format_version: string;
  elf_sha256_prefix: string;
  reason: string;
  panic_details: string;
  pc: number | null;
  task: string;
  in_interrupt: boolean;
  frames: CrashFrameDoc[];
  decoding: string;
  decoding_note: string;
  needs_elf: boolean;
  group_id: string | null;
  received_at: Date;
  attempts: number;
  lease_until: Date | null;
}

export interface CrashGroupDoc {
  _id: string;
  project_id: string;
  artifact_id: string;
  signature: string;
  reason: string;
  frames: CrashFrameDoc[];
  decoding: string;
}

export interface CoreDumpUploadDoc {
  _id: string;
  project_id: string;
  device_id: string;
  sha256: string;
  size: number;
  created_at: Date;
}

export interface CoreDumpPieceDoc {
  /** `<upload id>@<offset>`: the first writer of an offset keeps it. */
  _id: string;
  upload_id: string;
  offset: number;
  size: number;
  data: Buffer;
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
      elf: { type: Schema.Types.Mixed, default: null },
      sbom: { type: Schema.Types.Mixed, default: null },
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
  const frame = { _id: false, function: String, file: String, line: Number, address: Number };
  const crashSchema = new Schema<CrashDoc>(
    {
      _id: String,
      project_id: String,
      device_id: String,
      artifact_id: String,
      attribution: String,
      sha256: String,
      size: Number,
      storage_key: String,
      chip: String,
      format_version: String,
      elf_sha256_prefix: String,
      reason: String,
      panic_details: String,
      pc: { type: Number, default: null },
      task: String,
      in_interrupt: Boolean,
      frames: [frame],
      decoding: String,
      decoding_note: String,
      needs_elf: Boolean,
      group_id: { type: String, default: null },
      received_at: Date,
      attempts: Number,
      lease_until: { type: Date, default: null },
    },
    options,
  );
  // One crash per device and dump: a retried upload finds the one it stored.
  crashSchema.index({ project_id: 1, device_id: 1, sha256: 1 }, { unique: true });
  // The rate limit: a device's crashes of the last hour.
  crashSchema.index({ project_id: 1, device_id: 1, received_at: 1 });
  crashSchema.index({ project_id: 1, received_at: 1 });
  crashSchema.index({ group_id: 1, received_at: 1 });
  crashSchema.index({ decoding: 1, received_at: 1 });
  crashSchema.index({ project_id: 1, artifact_id: 1, needs_elf: 1 });
  const crashGroupSchema = new Schema<CrashGroupDoc>(
    { _id: String, project_id: String, artifact_id: String, signature: String, reason: String, frames: [frame], decoding: String },
    options,
  );
  const uploadSchema = new Schema<CoreDumpUploadDoc>({ _id: String, project_id: String, device_id: String, sha256: String, size: Number, created_at: Date }, options);
  uploadSchema.index({ created_at: 1 });
  const pieceSchema = new Schema<CoreDumpPieceDoc>({ _id: String, upload_id: String, offset: Number, size: Number, data: Buffer }, options);
  pieceSchema.index({ upload_id: 1, offset: 1 });
  const sbomComponentSchema = new Schema<SbomComponentDoc>(
    { _id: String, project_id: String, artifact_id: String, sbom_sha256: String, name: String, name_key: String, version: String, purl: String, cpes: [String], supplier: String, hashes: Schema.Types.Mixed },
    options,
  );
  sbomComponentSchema.index({ project_id: 1, name_key: 1 });
  sbomComponentSchema.index({ project_id: 1, purl: 1 });
  sbomComponentSchema.index({ project_id: 1, cpes: 1 });
  sbomComponentSchema.index({ artifact_id: 1, sbom_sha256: 1 });
  const vulnerabilitySchema = new Schema<VulnerabilityDoc>(
    { _id: String, project_id: String, advisory_id: String, component: Schema.Types.Mixed, versions: String, summary: String, known_at: Date, recorded_at: Date, exposure: Schema.Types.Mixed },
    options,
  );
  vulnerabilitySchema.index({ project_id: 1, known_at: -1 });
  const vexStatementSchema = new Schema<VexStatementDoc>(
    { _id: String, project_id: String, advisory_id: String, artifact_id: String, build_number: Number, status: String, justification: String, note: String, stated_at: Date },
    options,
  );
  vexStatementSchema.index({ project_id: 1, advisory_id: 1 });
  return {
    Crash: connection.model<CrashDoc>('Crash', crashSchema, 'crashes'),
    CrashGroup: connection.model<CrashGroupDoc>('CrashGroup', crashGroupSchema, 'crash_groups'),
    // One per attempt at decoding a crash, `<crash id>#<attempt>`, as patch_claims are for patches.
    CrashDecodeClaim: connection.model<{ _id: string; claimed_at: Date }>('CrashDecodeClaim', new Schema({ _id: String, claimed_at: Date }, options), 'crash_decode_claims'),
    CoreDumpUpload: connection.model<CoreDumpUploadDoc>('CoreDumpUpload', uploadSchema, 'coredump_uploads'),
    CoreDumpPiece: connection.model<CoreDumpPieceDoc>('CoreDumpPiece', pieceSchema, 'coredump_pieces'),
    Patch: connection.model<PatchDoc>('Patch', patchSchema, 'patches'),
    // One document per attempt at a job, `<patch id>#<attempt>`: the unique _id decides which
    // worker has it (FerretDB v1's find-and-modify is not atomic between two clients).
    PatchClaim: connection.model<{ _id: string; claimed_at: Date }>('PatchClaim', new Schema({ _id: String, claimed_at: Date }, options), 'patch_claims'),
    SigningKey: connection.model<SigningKeyDoc>('SigningKey', signingKeySchema, 'signing_keys'),
    Artifact: connection.model<ArtifactDoc>('Artifact', artifactSchema, 'artifacts'),
    SbomComponent: connection.model<SbomComponentDoc>('SbomComponent', sbomComponentSchema, 'sbom_components'),
    Vulnerability: connection.model<VulnerabilityDoc>('Vulnerability', vulnerabilitySchema, 'vulnerabilities'),
    VexStatement: connection.model<VexStatementDoc>('VexStatement', vexStatementSchema, 'vex_statements'),
    // One per build that was given an SBOM, `_id` the build's id: the unique insert decides which
    // document a build keeps when two arrive at once.
    SbomClaim: connection.model<{ _id: string; sha256: string }>('SbomClaim', new Schema({ _id: String, sha256: String }, options), 'sbom_claims'),
    // Per owner and UTC month: one place per upload counted against the plan.
    UploadPlace: connection.model<PlaceDoc>('UploadPlace', placeSchema, 'upload_places'),
  };
}

export type ArtifactModels = ReturnType<typeof registerArtifactModels>;
