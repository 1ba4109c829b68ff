import { requirementsIn, type BuildRequirements, type EspImage, type ReportedHardware } from '@ota/manifest';
import type { MaintenanceSchedule } from './maintenance-windows';

/** What the decision needs of a deployment: rollout's deployment holds more, and is one of these. */
export interface DecisionDeployment {
  id: string;
  projectId: string;
  artifactId: string;
  state: string;
  targetGroupIds: string[];
  targetChannelIds: string[];
  rolloutPercentage: number;
  createdAt: Date;
  startedAt: Date | null;
  /** When the deployment may offer its build; none: at any time. */
  maintenance?: MaintenanceSchedule | null;
  /** The deployment has the health guardrail: checks count how its targeted devices run. */
  watchesHealth?: boolean;
}

/** What the decision and the offer need of a build (from the artifacts service). */
export interface ArtifactSummary extends BuildRequirements {
  id: string;
  projectId: string;
  buildNumber: number;
  versionLabel: string;
  checksumSha256: string;
  fileSize: number;
  archived: boolean;
  signature: string;
  signingKeyId: string;
  /** The binary's key in the bucket, for presigned download URLs; empty from an artifacts release before it. */
  storageKey: string;
  /** What of its ESP-IDF image a device's bootloader checks; null for a binary that is not one. */
  image: BootImage | null;
}

export type BootImage = Pick<EspImage, 'minChipRevision' | 'maxChipRevision' | 'secureVersion'>;

/**
 * The checking device: where registry files it (channel, groups) and what this request reported
 * (its hardware, with `undefined` for a dimension it left out, and its build).
 */
export interface DecisionDevice extends ReportedHardware {
  id: string;
  channelId: string;
  groupIds: string[];
  currentBuildNumber: number;
  /** The device's offset from UTC in minutes (east positive), when it reported one. */
  utcOffsetMinutes?: number;
  /** The device put off this deployment's offer until then (the deferred event). */
  deferral?: Deferral | null;
}

export interface Deferral {
  deploymentId: string;
  until: Date;
}

/** An artifact record as the artifacts service answers it (its gRPC message), for `summaryOfArtifact`. */
export type ArtifactRecord = Omit<ArtifactSummary, 'minNvsSchemaVersion' | 'image'> & { minNvsSchemaVersion?: number | null | undefined; image?: BootImage | null | undefined };

/** The summary of an artifact record, keeping only what the decision and the offer use. */
export function summaryOfArtifact(artifact: ArtifactRecord): ArtifactSummary {
  return {
    id: artifact.id,
    projectId: artifact.projectId,
    buildNumber: artifact.buildNumber,
    versionLabel: artifact.versionLabel,
    ...requirementsIn(artifact),
    checksumSha256: artifact.checksumSha256,
    fileSize: artifact.fileSize,
    archived: artifact.archived,
    signature: artifact.signature,
    signingKeyId: artifact.signingKeyId,
    storageKey: artifact.storageKey,
    image: artifact.image ? { minChipRevision: artifact.image.minChipRevision, maxChipRevision: artifact.image.maxChipRevision, secureVersion: artifact.image.secureVersion } : null,
  };
}

/**
 * What rollout says of an offer registry's check is about to make (its RecordOffer): recorded, or
 * refused because the deployment is no longer active or the device rolled it back.
 */
export type OfferOutcome = 'recorded' | 'not_active' | 'rolled_back' | 'capped';

/** What an offer tells the device of the build (the fields of `ota.rollout.v1.Offer`). */
export function offerOf(deploymentId: string, artifact: ArtifactSummary) {
  return {
    deploymentId,
    artifactId: artifact.id,
    buildNumber: artifact.buildNumber,
    versionLabel: artifact.versionLabel,
    checksumSha256: artifact.checksumSha256,
    fileSize: artifact.fileSize,
    securityMode: artifact.securityMode,
    signature: artifact.signature,
    signingKeyId: artifact.signingKeyId,
    storageKey: artifact.storageKey,
  };
}
