import { isDomainError } from '@ota/errors';
import { randomUUID } from 'node:crypto';
import { decideOffer, type ArtifactSummary, type Decision, type DecisionDeployment, type DecisionViews, type OfferOutcome } from '@ota/decision';
import { CHECK_MESSAGES, type CheckStatus } from '@ota/vocabulary';
import { healthIncrement, healthSides, type HealthSnapshot, type HealthTallies } from './device-health';
import type { CheckEvent, CheckInInput, Device } from './model';
import type { Registry } from './registry';

/** Rollout, as the check needs it: it confirms and records each offer (rollout keeps owning rollout statuses). */
export interface OfferLedger {
  recordOffer(offer: { projectId: string; deploymentId: string; deviceId: string }): Promise<OfferOutcome>;
}

export interface DeviceCheckDeps {
  registry: Pick<Registry, 'checkIn' | 'recordCheck'>;
  views: DecisionViews<DecisionDeployment>;
  offers: OfferLedger;
  /** Where the health the check reports is counted for the deployments that watch it. */
  health: HealthTallies;
  /** A check whose record could not be written: reported, and answered all the same. */
  recordFailed(error: unknown, deviceId: string): void;
  now?: () => Date;
}

export interface DeviceCheckInput extends CheckInInput {
  currentBuildNumber: number;
  /** The device's offset from UTC in minutes, when it reported one (maintenance windows in device local time). */
  utcOffsetMinutes?: number;
  /** How the device has run since it installed the build it runs, when it reported it. */
  health?: HealthReport;
}

export type HealthReport = Omit<HealthSnapshot, 'build' | 'at'>;

export type DeviceCheckAnswer =
  | { status: 'offered'; message: string; deploymentId: string; artifact: ArtifactSummary }
  | { status: Exclude<CheckStatus, 'offered'>; message: string; windowOpensAt?: Date; deferredUntil?: Date; checkAgainAt?: Date };

/**
 * A device check (docs/api.md, "The check decision"), answered by registry alone: the device is
 * checked in (or registered) in one write that returns it as it was, the decision is made from
 * this replica's views with the one decision code (`@ota/decision`), an offer is confirmed by
 * rollout, and the decision record is inserted before the answer, so that a read right after it
 * sees all of it.
 */
export async function checkDevice(deps: DeviceCheckDeps, input: DeviceCheckInput): Promise<DeviceCheckAnswer> {
  const { projectId } = input;
  const at = deps.now?.() ?? new Date();
  const decide = (device: Device, active: readonly DecisionDeployment[], rolledBack: ReadonlySet<string>) =>
    decideOffer({
      device: {
        ...input.reported,
        id: device.id,
        channelId: device.channelId,
        groupIds: device.groupIds,
        currentBuildNumber: input.currentBuildNumber,
        utcOffsetMinutes: input.utcOffsetMinutes,
        deferral: device.deferral,
      },
      activeDeployments: active,
      artifactOf: (id) => deps.views.artifact(id),
      rolledBack,
      at,
    });
  const health: HealthSnapshot | undefined = input.health && { ...input.health, build: input.currentBuildNumber, at };
  const checkIn = await deps.registry.checkIn({ ...input, at, health }, (device) => outcomeKnownBeforeRegistration(() => decide(device, deps.views.activeDeployments(projectId), new Set())));
  // A device that was not registered has nothing to record on.
  if (checkIn.outcome === 'over_limit') return { status: 'over_limit', message: CHECK_MESSAGES.over_limit };
  const device = checkIn.device;

  /** Recording is best effort (docs/api.md, "Records"): a failure is reported, and the answer stands. */
  const answer = async (decided: DeviceCheckAnswer): Promise<DeviceCheckAnswer> => {
    const offer = decided.status === 'offered' ? decided : undefined;
    const event: CheckEvent = {
      id: randomUUID(),
      projectId,
      deviceId: input.deviceId,
      createdAt: at,
      decision: offer ? 'offered' : 'no_update',
      status: decided.status,
      deploymentId: offer?.deploymentId ?? '',
      artifactBuildNumber: offer?.artifact.buildNumber ?? null,
      reportedBuildNumber: input.currentBuildNumber,
      reportedVersion: input.reported.versionLabel ?? '',
      message: decided.message,
    };
    await deps.registry
      .recordCheck({ projectId, id: device.id, seq: device.checkCount + 1, previousStatus: device.lastCheckStatus, event })
      .catch((error: unknown) => deps.recordFailed(error, input.deviceId));
    return decided;
  };

  // An inactive device, and one that must use its own token, got no heartbeat (CheckIn) and get no decision.
  if (checkIn.outcome === 'inactive') return answer({ status: 'device_inactive', message: CHECK_MESSAGES.device_inactive });
  if (checkIn.outcome === 'token_required') return answer({ status: 'token_required', message: CHECK_MESSAGES.token_required });

  // A new device is decided again here: the views may have moved during its registration.
  let active = deps.views.activeDeployments(projectId);
  if (health) countHealth(deps, device, input, health, active);
  const rolledBack = new Set<string>();
  // Each refusal by rollout takes one deployment out of the running, so this ends.
  for (;;) {
    const decision = decide(device, active, rolledBack);
    if (decision.status !== 'offered') return answer({ status: decision.status, message: decision.message, windowOpensAt: decision.windowOpensAt, deferredUntil: decision.deferredUntil });
    const deploymentId = decision.deployment.id;
    const outcome = await deps.offers.recordOffer({ projectId, deploymentId, deviceId: device.id });
    if (outcome === 'recorded') return answer({ status: 'offered', message: decision.message, deploymentId, artifact: decision.artifact });
    // The deployment's caps hold the device back for now: it is in the rollout, and checks again
    // at the next minute, when a rate cap has room again and the devices in progress are counted anew.
    if (outcome === 'capped') return answer({ status: 'not_in_rollout', message: CAPPED_MESSAGE, checkAgainAt: nextMinute(at) });
    if (outcome === 'rolled_back') rolledBack.add(deploymentId);
    else active = active.filter((deployment) => deployment.id !== deploymentId);
  }
}

const CAPPED_MESSAGE = "the deployment's offer caps (new offers a minute, or devices updating at once) hold this device back for now; check again later";

function nextMinute(at: Date): Date {
  return new Date((Math.floor(at.getTime() / 60_000) + 1) * 60_000);
}

/** The device's health since its check before, counted for each deployment that watches it. */
function countHealth(deps: DeviceCheckDeps, device: Device, input: DeviceCheckInput, health: HealthSnapshot, active: readonly DecisionDeployment[]): void {
  const increment = device.health ? healthIncrement(device.health, health) : null;
  if (!increment || !active.some((deployment) => deployment.watchesHealth)) return;
  const checking = { ...input.reported, id: device.id, channelId: device.channelId, groupIds: device.groupIds, currentBuildNumber: input.currentBuildNumber };
  deps.health.count(healthSides(checking, active, (id) => deps.views.artifact(id)), increment, device.health!.at, health.at);
}

/**
 * The outcome of a device's first check, when it is known before the device is registered: any
 * but an offer, which rollout must confirm first. A refused request (a build's required field not
 * reported: the decision's InvalidArgument) registers the device all the same, and is refused by
 * the decision after; any other error is a failure of the check.
 */
function outcomeKnownBeforeRegistration(decide: () => Decision): CheckStatus | undefined {
  try {
    const decision = decide();
    return decision.status === 'offered' ? undefined : decision.status;
  } catch (error) {
    if (isDomainError(error, 'InvalidArgument')) return undefined;
    throw error;
  }
}
