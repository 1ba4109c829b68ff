import { PREVIEW_OUTCOMES, type PreviewOutcome } from '@ota/vocabulary';
import type { HardwareProfile } from '@ota/manifest';
import { isDomainError } from '@ota/errors';
import { decideOffer, targetsDevice, type ArtifactSummary, type DecisionDevice } from '@ota/decision';
import type { Deployment } from './model';

export { PREVIEW_OUTCOMES, type PreviewOutcome } from '@ota/vocabulary';

/** How many devices get an outcome, and the first few of them. */
export interface PreviewBucket {
  count: number;
  /** The units' own device_id strings of the first few. */
  deviceIds: string[];
}

/** A device as the registry stores it: the profile of its last check, and whether it is active. */
export interface FleetDevice extends HardwareProfile {
  /** The device's UUID. */
  id: string;
  /** The unit's own device_id string. */
  deviceId: string;
  active: boolean;
  channelId: string;
  groupIds: string[];
  currentBuildNumber: number;
}

export const PREVIEW_SAMPLE_SIZE = 20;

/**
 * Adds fleet devices to a preview of `deployment`, deciding each with the check's own decideOffer
 * over `activeDeployments` (which must hold the previewed deployment as it would be active). A
 * device is judged as if it checked again now with the hardware of its last check and the build it
 * last confirmed (the device's current_build_number, which a confirm sets).
 */
export class PreviewTally {
  readonly buckets = new Map<PreviewOutcome, PreviewBucket>(PREVIEW_OUTCOMES.map((outcome) => [outcome, { count: 0, deviceIds: [] }]));
  total = 0;

  constructor(
    private readonly deployment: Deployment,
    private readonly activeDeployments: readonly Deployment[],
    private readonly artifactOf: (artifactId: string) => ArtifactSummary | undefined,
    private readonly rolledBack: (deviceUuid: string) => ReadonlySet<string>,
  ) {}

  get rolloutPercentage(): number {
    return this.deployment.rolloutPercentage;
  }

  add(device: FleetDevice): void {
    this.total += 1;
    const bucket = this.buckets.get(this.outcomeOf(device))!;
    bucket.count += 1;
    if (bucket.deviceIds.length < PREVIEW_SAMPLE_SIZE) bucket.deviceIds.push(device.deviceId);
  }

  private outcomeOf(device: FleetDevice): PreviewOutcome {
    // The check answers an inactive device before it looks at deployments (docs/api.md, "The check decision").
    if (!device.active) return 'device_inactive';
    if (!targetsDevice(this.deployment, device)) return 'not_targeted';
    // A device registered by the API that never checked in has no profile to decide on.
    if (!device.framework || !device.chipFamily) return 'unknown_hardware';
    try {
      const decision = decideOffer({
        device: decisionDeviceOf(device),
        activeDeployments: this.activeDeployments,
        artifactOf: this.artifactOf,
        rolledBack: this.rolledBack(device.id),
      });
      // The previewed deployment targets the device, so some active deployment does.
      return decision.status === 'no_active_deployment' ? 'not_targeted' : decision.status;
    } catch (error) {
      // A targeted build declares board_id or hardware_revision, which the device's last check left
      // out: its next check with that profile would be refused.
      if (isDomainError(error)) return 'unknown_hardware';
      throw error;
    }
  }
}

/** The registry stores a dimension the device left out as blank (or null): the check sees it as not reported. */
function decisionDeviceOf(device: FleetDevice): DecisionDevice {
  return {
    id: device.id,
    channelId: device.channelId,
    groupIds: device.groupIds,
    framework: device.framework,
    chipFamily: device.chipFamily,
    boardId: device.boardId || undefined,
    hardwareRevision: device.hardwareRevision || undefined,
    partitionProfile: device.partitionProfile || undefined,
    nvsSchemaVersion: device.nvsSchemaVersion ?? undefined,
    securityMode: device.securityMode || undefined,
    chipRevision: device.chipRevision ?? undefined,
    secureVersion: device.secureVersion ?? undefined,
    currentBuildNumber: device.currentBuildNumber,
  };
}

/**
 * The deployment as a check would see it if it were active now: a draft at the percentage it
 * starts with (its first stage's, when it has a plan), any other state at its current percentage.
 */
export function asIfActive(deployment: Deployment, now: Date): Deployment {
  if (deployment.state === 'active') return deployment;
  const startsAt = deployment.state === 'draft' && deployment.stages.length > 0 ? deployment.stages[0]!.percentage : deployment.rolloutPercentage;
  return { ...deployment, state: 'active', rolloutPercentage: startsAt, startedAt: deployment.startedAt ?? now };
}
