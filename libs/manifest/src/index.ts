import Ajv, { type ErrorObject } from 'ajv';
import { invalidArgument } from '@ota/errors';

/** The manifest an upload carries (docs/api.md, "Artifact and manifest"). Unknown keys are refused. */
export interface Manifest {
  version_label: string;
  framework: 'arduino' | 'esp_idf';
  chip_family: string;
  board_id?: string;
  hardware_revision?: string;
  partition_profile?: string;
  min_nvs_schema_version?: number;
  security_mode?: string;
  release_notes?: string;
  signature?: string;
}

/**
 * What a build requires of a device, as the services hold it (camelCase, absent text as '' and an
 * absent NVS minimum as null): stored with the artifact, and matched against each device's
 * reported hardware when rollout decides an offer.
 */
export interface BuildRequirements {
  framework: string;
  chipFamily: string;
  boardId: string;
  hardwareRevision: string;
  partitionProfile: string;
  minNvsSchemaVersion: number | null;
  securityMode: string;
}

/** What a build requires, as the manifest, the HTTP API, the stores and the bus spell it. */
export interface BuildRequirementFields {
  framework: string;
  chip_family: string;
  board_id: string;
  hardware_revision: string;
  partition_profile: string;
  min_nvs_schema_version: number | null;
  security_mode: string;
}

/** The snake_case fields of what a build requires. */
export function requirementFields(requirements: BuildRequirements): BuildRequirementFields {
  return {
    framework: requirements.framework,
    chip_family: requirements.chipFamily,
    board_id: requirements.boardId,
    hardware_revision: requirements.hardwareRevision,
    partition_profile: requirements.partitionProfile,
    min_nvs_schema_version: requirements.minNvsSchemaVersion,
    security_mode: requirements.securityMode,
  };
}

/**
 * What a build requires, from snake_case fields: a manifest's, a stored document's or an event's.
 * A field a manifest does not declare (or an older document lacks) requires nothing: '' or null.
 */
export function requirementsOf(fields: Partial<BuildRequirementFields>): BuildRequirements {
  return {
    framework: fields.framework ?? '',
    chipFamily: fields.chip_family ?? '',
    boardId: fields.board_id ?? '',
    hardwareRevision: fields.hardware_revision ?? '',
    partitionProfile: fields.partition_profile ?? '',
    minNvsSchemaVersion: fields.min_nvs_schema_version ?? null,
    securityMode: fields.security_mode ?? '',
  };
}

/**
 * The requirements among a record's camelCase fields, such as a proto message's, which holds an
 * absent NVS minimum as undefined where the services hold null.
 */
export function requirementsIn(record: Omit<BuildRequirements, 'minNvsSchemaVersion'> & { minNvsSchemaVersion?: number | null }): BuildRequirements {
  const { framework, chipFamily, boardId, hardwareRevision, partitionProfile, minNvsSchemaVersion, securityMode } = record;
  return { framework, chipFamily, boardId, hardwareRevision, partitionProfile, minNvsSchemaVersion: minNvsSchemaVersion ?? null, securityMode };
}

/**
 * What a device reports of its hardware, as the services hold it (absent text as '', an absent NVS
 * version as null): what BuildRequirements are matched against.
 */
export interface HardwareProfile {
  framework: string;
  chipFamily: string;
  boardId: string;
  hardwareRevision: string;
  partitionProfile: string;
  nvsSchemaVersion: number | null;
  securityMode: string;
  /** major × 100 + minor, as ESP-IDF's efuse_hal_chip_revision() counts; null when not reported. */
  chipRevision: number | null;
  /** The eFuse anti-rollback version; null when not reported. */
  secureVersion: number | null;
}

/**
 * What a device reported of its hardware in one request: framework and chip always, each other
 * dimension `undefined` when the request left it out. The one spelling of "not reported" from
 * the HTTP body to the decision (a proto message's unset optional field reads as `undefined` too).
 */
export interface ReportedHardware {
  framework: string;
  chipFamily: string;
  boardId?: string | undefined;
  hardwareRevision?: string | undefined;
  partitionProfile?: string | undefined;
  nvsSchemaVersion?: number | undefined;
  securityMode?: string | undefined;
  chipRevision?: number | undefined;
  secureVersion?: number | undefined;
}

/** A device's hardware as the device API, the HTTP answers and the registry's documents spell it. */
export interface HardwareProfileFields {
  framework: string;
  chip_family: string;
  board_id: string;
  hardware_revision: string;
  partition_profile: string;
  nvs_schema_version: number | null;
  security_mode: string;
  chip_revision: number | null;
  secure_version: number | null;
}

/** The snake_case fields of a device's hardware. */
export function profileFields(profile: HardwareProfile): HardwareProfileFields {
  return {
    framework: profile.framework,
    chip_family: profile.chipFamily,
    board_id: profile.boardId,
    hardware_revision: profile.hardwareRevision,
    partition_profile: profile.partitionProfile,
    nvs_schema_version: profile.nvsSchemaVersion,
    security_mode: profile.securityMode,
    chip_revision: profile.chipRevision,
    secure_version: profile.secureVersion,
  };
}

/** A device's hardware from snake_case fields (a request body, a stored document); what is absent is '' or null. */
export function profileOf(fields: Partial<HardwareProfileFields>): HardwareProfile {
  return {
    framework: fields.framework ?? '',
    chipFamily: fields.chip_family ?? '',
    boardId: fields.board_id ?? '',
    hardwareRevision: fields.hardware_revision ?? '',
    partitionProfile: fields.partition_profile ?? '',
    nvsSchemaVersion: fields.nvs_schema_version ?? null,
    securityMode: fields.security_mode ?? '',
    chipRevision: fields.chip_revision ?? null,
    secureVersion: fields.secure_version ?? null,
  };
}

/** A record with some of a device's hardware among its camelCase fields (a proto message, a report). */
export type HardwareProfileRecord = { [K in keyof HardwareProfile]?: HardwareProfile[K] | undefined };

/** The hardware among a record's camelCase fields; what is absent is '' or null. */
export function profileIn(record: HardwareProfileRecord): HardwareProfile {
  return {
    framework: record.framework ?? '',
    chipFamily: record.chipFamily ?? '',
    boardId: record.boardId ?? '',
    hardwareRevision: record.hardwareRevision ?? '',
    partitionProfile: record.partitionProfile ?? '',
    nvsSchemaVersion: record.nvsSchemaVersion ?? null,
    securityMode: record.securityMode ?? '',
    chipRevision: record.chipRevision ?? null,
    secureVersion: record.secureVersion ?? null,
  };
}

/** A device's hardware as proto's ota.hardware.v1.HardwareProfile holds it (an absent NVS version is unset). */
export type HardwareProfileMessage = Omit<HardwareProfile, 'nvsSchemaVersion' | 'chipRevision' | 'secureVersion'> & {
  nvsSchemaVersion?: number | undefined;
  chipRevision?: number | undefined;
  secureVersion?: number | undefined;
};

/**
 * A device's hardware for a proto message: its `hardware` field and (PREVIOUS RELEASE) the same
 * fields flat beside it, for replicas of the release before (docs/architecture.md, "Changing a message between releases").
 */
export function profileMessage(record: HardwareProfileRecord): HardwareProfileMessage {
  const profile = profileIn(record);
  return { ...profile, nvsSchemaVersion: profile.nvsSchemaVersion ?? undefined, chipRevision: profile.chipRevision ?? undefined, secureVersion: profile.secureVersion ?? undefined };
}

/**
 * The hardware a proto message carries: its `hardware` field, or (PREVIOUS RELEASE) the flat fields
 * when a replica of the release before wrote it, which has no `hardware` field.
 */
export function profileOfMessage(message: HardwareProfileRecord & { hardware: HardwareProfileRecord | undefined }): HardwareProfile {
  return profileIn(message.hardware ?? message);
}

const SHORT_TEXT = { type: 'string', minLength: 1, maxLength: 128 } as const;

export const MANIFEST_SCHEMA = {
  title: 'Artifact manifest',
  type: 'object',
  additionalProperties: false,
  required: ['version_label', 'framework', 'chip_family'],
  properties: {
    version_label: { ...SHORT_TEXT, description: 'Display label, e.g. 1.4.2. Never used for compatibility.' },
    framework: { type: 'string', enum: ['arduino', 'esp_idf'] },
    chip_family: { ...SHORT_TEXT, description: 'e.g. esp32, esp32s3, esp32c3' },
    board_id: { ...SHORT_TEXT, description: 'When declared, a device must report the same board_id.' },
    hardware_revision: { ...SHORT_TEXT, description: 'When declared, a device must report the same hardware_revision.' },
    partition_profile: { ...SHORT_TEXT, description: 'When declared, a device reporting another profile is not offered the build.' },
    min_nvs_schema_version: { type: 'integer', minimum: 0, description: 'Devices reporting a lower NVS schema version are not offered the build.' },
    security_mode: { ...SHORT_TEXT, description: 'When declared, a device reporting another mode is not offered the build.' },
    release_notes: { type: 'string', maxLength: 10_000 },
    signature: { type: 'string', minLength: 1, maxLength: 256, description: 'Base64 Ed25519 signature of the binary.' },
  },
} as const;

const validate = new Ajv({ allErrors: true }).compile<Manifest>(MANIFEST_SCHEMA);

/** Parses and validates manifest text; throws InvalidArgument with a message a developer can act on. */
export function parseManifest(text: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidArgument('manifest is not valid JSON');
  }
  if (!validate(value)) throw invalidArgument(`manifest is invalid: ${describeErrors(validate.errors ?? [])}`);
  return value;
}

function describeErrors(errors: ErrorObject[]): string {
  return errors
    .map((error) => {
      const where = error.instancePath ? error.instancePath.slice(1) : 'manifest';
      if (error.keyword === 'additionalProperties') return `unknown key "${String(error.params.additionalProperty)}"`;
      return `${where} ${error.message ?? 'is invalid'}`;
    })
    .join('; ');
}

export * from './esp-chips';
export * from './esp-image';
export * from './esp-image-reader';
