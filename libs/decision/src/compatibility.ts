import { invalidArgument } from '@ota/errors';
import { admitsChipRevision } from '@ota/manifest';
import type { ArtifactSummary, DecisionDevice } from './model';

/**
 * Throws when a build the device is targeted by declares board_id or hardware_revision and the
 * request did not carry it (docs/api.md, "Compatibility": those fields are required when a build declares them).
 */
export function requireDeclaredDimensions(artifact: ArtifactSummary, device: DecisionDevice): void {
  if (artifact.boardId && device.boardId === undefined) throw invalidArgument('board_id is required: a targeted build declares it');
  if (artifact.hardwareRevision && device.hardwareRevision === undefined) {
    throw invalidArgument('hardware_revision is required: a targeted build declares it');
  }
}

/** Whether the build fits the device (docs/api.md, "Compatibility"). */
export function isCompatible(artifact: ArtifactSummary, device: DecisionDevice): boolean {
  if (artifact.archived) return false;
  if (artifact.framework !== device.framework || artifact.chipFamily !== device.chipFamily) return false;
  if (artifact.boardId && artifact.boardId !== device.boardId) return false;
  if (artifact.hardwareRevision && artifact.hardwareRevision !== device.hardwareRevision) return false;
  // For these three, a blank or unreported device value always matches.
  if (artifact.partitionProfile && device.partitionProfile && artifact.partitionProfile !== device.partitionProfile) return false;
  if (artifact.minNvsSchemaVersion !== null && device.nvsSchemaVersion !== undefined && device.nvsSchemaVersion < artifact.minNvsSchemaVersion) {
    return false;
  }
  if (artifact.securityMode && device.securityMode && artifact.securityMode !== device.securityMode) return false;
  return true;
}

/**
 * Why the device's bootloader would refuse the build's image, when the device reported what it
 * checks (docs/api.md, "Compatibility"): a chip revision outside the image's range, or an eFuse
 * secure version above the image's. Undefined when it would boot it, or cannot tell.
 */
export function bootRefusal(artifact: ArtifactSummary, device: DecisionDevice): 'chip_revision_unsupported' | 'secure_version_too_low' | undefined {
  const image = artifact.image;
  if (!image) return undefined;
  if (device.chipRevision !== undefined && !admitsChipRevision(image, device.chipRevision)) return 'chip_revision_unsupported';
  if (device.secureVersion !== undefined && image.secureVersion < device.secureVersion) return 'secure_version_too_low';
  return undefined;
}
