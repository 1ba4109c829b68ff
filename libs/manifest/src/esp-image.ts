import { espChipByName } from './esp-chips';

/**
 * What an ESP-IDF application image says of itself (docs/api.md, "The image"): read from its
 * header and its app descriptor (`esp_app_desc_t`) when it is uploaded, and kept with the build.
 * Chip revisions count as ESP-IDF's `efuse_hal_chip_revision()` does: major × 100 + minor.
 */
export interface EspImage {
  /** The chip family the header's chip id names (`esp32c3`). */
  chip: string;
  chipId: number;
  /** The anti-rollback version: a device whose eFuse holds more does not boot it. */
  secureVersion: number;
  version: string;
  projectName: string;
  idfVersion: string;
  /** The SHA-256 of the ELF the image was made from, in hex, as ESP-IDF's build wrote it. */
  elfSha256: string;
  minChipRevision: number;
  /** 0 and 65535 set no upper bound (ESP-IDF's bootloader reads them so). */
  maxChipRevision: number;
  minEfuseBlockRevision: number;
  maxEfuseBlockRevision: number;
  /** A SHA-256 of the image follows its checksum, and matched. */
  hashAppended: boolean;
}

/** The snake_case fields of an image, as the HTTP API, the store and the bus spell them. */
export interface EspImageFields {
  chip: string;
  chip_id: number;
  secure_version: number;
  version: string;
  project_name: string;
  idf_version: string;
  elf_sha256: string;
  min_chip_revision: number;
  max_chip_revision: number;
  min_efuse_block_revision: number;
  max_efuse_block_revision: number;
  hash_appended: boolean;
}

export function imageFields(image: EspImage): EspImageFields {
  return {
    chip: image.chip,
    chip_id: image.chipId,
    secure_version: image.secureVersion,
    version: image.version,
    project_name: image.projectName,
    idf_version: image.idfVersion,
    elf_sha256: image.elfSha256,
    min_chip_revision: image.minChipRevision,
    max_chip_revision: image.maxChipRevision,
    min_efuse_block_revision: image.minEfuseBlockRevision,
    max_efuse_block_revision: image.maxEfuseBlockRevision,
    hash_appended: image.hashAppended,
  };
}

export function imageOf(fields: EspImageFields): EspImage {
  return {
    chip: fields.chip,
    chipId: fields.chip_id,
    secureVersion: fields.secure_version,
    version: fields.version,
    projectName: fields.project_name,
    idfVersion: fields.idf_version,
    elfSha256: fields.elf_sha256,
    minChipRevision: fields.min_chip_revision,
    maxChipRevision: fields.max_chip_revision,
    minEfuseBlockRevision: fields.min_efuse_block_revision,
    maxEfuseBlockRevision: fields.max_efuse_block_revision,
    hashAppended: fields.hash_appended,
  };
}

/** Whether the image's chip-revision range admits a chip of `revision` (ESP-IDF's bootloader check). */
export function admitsChipRevision(image: Pick<EspImage, 'minChipRevision' | 'maxChipRevision'>, revision: number): boolean {
  if (revision < image.minChipRevision) return false;
  const bounded = image.maxChipRevision !== 0 && image.maxChipRevision !== 0xffff;
  return !bounded || revision <= image.maxChipRevision;
}

/** A build that raises its chip's anti-rollback version: confirming it burns eFuse bits for good. */
export interface SecureVersionRaise {
  /** The highest secure_version of the project's earlier builds for the chip; 0 when none had one. */
  from: number;
  to: number;
  /** The chip's secure-version eFuse bits left unburnt once a device confirms the build. */
  efuseBitsLeft: number;
}

interface BuildWithImage {
  buildNumber: number;
  image?: Pick<EspImage, 'chip' | 'secureVersion'> | null | undefined;
}

/**
 * Whether the build raises secure_version: its image's is above that of every earlier build of
 * the project for the same chip (a project's first image with one above 0 counts). Earlier builds
 * never change, so the answer for a build never does.
 */
export function secureVersionRaise(build: BuildWithImage, projectBuilds: readonly BuildWithImage[]): SecureVersionRaise | null {
  const image = build.image;
  if (!image) return null;
  let from = 0;
  for (const other of projectBuilds) {
    if (other.buildNumber < build.buildNumber && other.image?.chip === image.chip) from = Math.max(from, other.image.secureVersion);
  }
  if (image.secureVersion <= from) return null;
  const bits = espChipByName(image.chip)?.secureVersionBits ?? 0;
  return { from, to: image.secureVersion, efuseBitsLeft: Math.max(0, bits - image.secureVersion) };
}
