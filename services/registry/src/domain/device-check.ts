import { isDomainError, notFound } from '@ota/errors';
import { randomUUID } from 'node:crypto';
import type { OutboundCall } from '@ota/logging';
import { decideOffer, type ArtifactSummary, type Decision, type DecisionDeployment, type DecisionViews, type OfferOutcome } from '@ota/decision';
import { CHECK_MESSAGES, type CheckStatus } from '@ota/vocabulary';
import { healthIncrement, healthSides, type HealthSnapshot, type HealthTallies } from './device-health';
import { heartbeatRefusal } from './heartbeat-rule';
import { DECISION_RECORDS_KEPT_PER_DEVICE, type DecisionRecord, type CheckIn, type CheckInInput, type Device } from './model';
import { newDevice } from './new-device';
import type { RegistryStore } from './ports';

/** Rollout, as the check needs it: it confirms and records each offer (rollout keeps owning rollout statuses). */
export interface OfferLedger {
  recordOffer(offer: { projectId: string; deploymentId: string; deviceUuid: string }, call: OutboundCall): Promise<OfferOutcome>;
}

/** What of registry's store a check writes and reads. */
export type CheckStore = Pick<RegistryStore, 'checkIn' | 'groupIdsOf' | 'findDefaultChannel' | 'registerDevice' | 'recordCheck' | 'trimDecisionRecords'>;

export interface DeviceCheckDeps {
  store: CheckStore;
  views: DecisionViews<DecisionDeployment>;
  offers: OfferLedger;
  /** Where the health the check reports is counted for the deployments that watch it. */
  health: HealthTallies;
  /**
   * Work beside the answer that failed: a decision record not written (the answer stands), or a
   * trim of old records (the device's next 20th check makes it good).
   */
  warn(error: unknown, message: string, deviceId: string): void;
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
 * A device check (docs/api.md, "The check decision"), answered by registry alone, top to bottom:
 *
 * 1. the device is checked in, one find-and-modify that counts the check, writes the heartbeat
 *    when the heartbeat rule allows it (heartbeat-rule.ts), and returns the device as it was;
 * 2. an unknown device is registered instead, its insert counting as its check-in, with its
 *    outcome when that is known before (anything but an offer, which rollout must confirm);
 * 3. a device the heartbeat rule refuses is answered so, with no decision;
 * 4. the decision is made from this replica's views with the one decision code (`@ota/decision`),
 *    and an offer is confirmed by rollout, which may refuse it (not active, rolled back, capped);
 * 5. the decision record is inserted before the answer, so that a read right after it sees all of
 *    it, and every 20th check trims the device's old records beside the answer.
 */
export async function checkDevice(deps: DeviceCheckDeps, input: DeviceCheckInput, call: OutboundCall): Promise<DeviceCheckAnswer> {
  const { projectId } = input;
  const at = deps.now?.() ?? new Date();
  const decide = (device: Device, active: readonly DecisionDeployment[], rolledBack: ReadonlySet<string>) =>
    decideOffer({
      // The reported profile last: V8 builds an object with properties after a spread through its
      // runtime, and every check makes this one (docs/performance.md).
      device: {
        id: device.id,
        channelId: device.channelId,
        groupIds: device.groupIds,
        currentBuildNumber: input.currentBuildNumber,
        utcOffsetMinutes: input.utcOffsetMinutes,
        deferral: device.deferral,
        ...input.reported,
      },
      activeDeployments: active,
      artifactOf: (id) => deps.views.artifact(id),
      rolledBack,
      at,
    });
  const health: HealthSnapshot | undefined = input.health && { build: input.currentBuildNumber, at, ...input.health };
  const checkIn: CheckIn = { projectId, deviceId: input.deviceId, reported: input.reported, viaProjectToken: input.viaProjectToken, at, health };

  // 1 and 2: the device as it was before this check.
  let device = await deps.store.checkIn(checkIn);
  if (!device) {
    const registered = await registerOnFirstCheck(deps.store, input, checkIn, (fresh) => outcomeKnownBeforeRegistration(() => decide(fresh, deps.views.activeDeployments(projectId), new Set())));
    // A device that was not registered has nothing to record on.
    if (registered === 'over_limit') return { status: 'over_limit', message: CHECK_MESSAGES.over_limit };
    device = registered;
  }
  const checked = device;

  /** Recording is best effort (docs/api.md, "Records"): a failure is reported, and the answer stands. */
  const answer = async (decided: DeviceCheckAnswer): Promise<DeviceCheckAnswer> => {
    const offer = decided.status === 'offered' ? decided : undefined;
    const record: DecisionRecord = {
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
    const seq = checked.checkCount + 1;
    try {
      await deps.store.recordCheck({ projectId, id: checked.id, seq, previousStatus: checked.lastCheckStatus, record });
      trimRecordsIfDue(deps, checked.id, seq, input.deviceId);
    } catch (error) {
      deps.warn(error, 'check not recorded', input.deviceId);
    }
    return decided;
  };

  // 3: the heartbeat rule.
  const refusal = heartbeatRefusal(checked, input.viaProjectToken);
  if (refusal === 'inactive') return answer({ status: 'device_inactive', message: CHECK_MESSAGES.device_inactive });
  if (refusal === 'token_required') return answer({ status: 'token_required', message: CHECK_MESSAGES.token_required });

  // 4: a new device is decided again here, as the views may have moved during its registration.
  let active = deps.views.activeDeployments(projectId);
  // The device as checked in carries no groups (RegistryStore.checkIn): its memberships are read
  // only when some deployment targets groups.
  const targeted = active.some((deployment) => deployment.targetGroupIds.length > 0) ? { ...checked, groupIds: await deps.store.groupIdsOf(checked.id) } : checked;
  if (health) countHealth(deps, targeted, input, health, active);
  const rolledBack = new Set<string>();
  // Each refusal by rollout takes one deployment out of the running, so this ends.
  for (;;) {
    const decision = decide(targeted, active, rolledBack);
    if (decision.status !== 'offered') return answer({ status: decision.status, message: decision.message, windowOpensAt: decision.windowOpensAt, deferredUntil: decision.deferredUntil });
    const deploymentId = decision.deployment.id;
    const outcome = await deps.offers.recordOffer({ projectId, deploymentId, deviceUuid: checked.id }, call);
    if (outcome === 'recorded') return answer({ status: 'offered', message: decision.message, deploymentId, artifact: decision.artifact });
    // The deployment's caps hold the device back for now: it is in the rollout, and checks again
    // at the next minute, when a rate cap has room again and the devices in progress are counted anew.
    if (outcome === 'capped') return answer({ status: 'not_in_rollout', message: CAPPED_MESSAGE, checkAgainAt: nextMinute(at) });
    if (outcome === 'rolled_back') rolledBack.add(deploymentId);
    else active = active.filter((deployment) => deployment.id !== deploymentId);
  }
}

/**
 * Registers a device on its first check, within its owner's cap, stored as checked in (its check
 * counted, and `outcomeOf` the new device when known) so that its first check writes it once.
 * Answers the device as it was before the check (its registration's outcome aside, which the
 * record compares against), or `over_limit`.
 */
async function registerOnFirstCheck(
  store: CheckStore,
  input: DeviceCheckInput,
  checkIn: CheckIn,
  outcomeOf: (device: Device) => CheckStatus | undefined,
): Promise<Device | 'over_limit'> {
  // A device token names a device that exists; only the shared project token registers.
  if (!input.viaProjectToken) throw notFound('device not found');
  const defaultChannel = await store.findDefaultChannel(input.projectId);
  if (!defaultChannel) throw notFound('project not found');
  const checkedIn: Device = { ...newDevice(input.projectId, input.deviceId, input.reported, defaultChannel.id, checkIn.at), lastCheckAt: checkIn.at, checkCount: 1, health: checkIn.health ?? null };
  const registered = await store.registerDevice({ ...checkedIn, lastCheckStatus: outcomeOf(checkedIn) ?? '' }, input.ownerId, input.maxDevices, 'check');
  if (registered === 'over_limit') return 'over_limit';
  // As it was before its check, except the outcome stored with it: the record compares against that.
  if (registered.created) return { ...registered.device, checkCount: 0, lastCheckAt: null, health: null };
  // Lost a race with a concurrent first check of the same device: it is known now.
  const known = await store.checkIn(checkIn);
  if (!known) throw notFound('device not found');
  return known;
}

/**
 * Deletes a device's decision records beyond the newest 20 on its every 20th check, so that it
 * keeps at most 39 and the listing's newest 20 are always there. A trim reads the records it
 * deletes, so it does not run on every check; it runs beside the answer, and one that fails is
 * made good by the next.
 */
function trimRecordsIfDue(deps: DeviceCheckDeps, id: string, seq: number, deviceId: string): void {
  if (seq % DECISION_RECORDS_KEPT_PER_DEVICE !== 0) return;
  void deps.store.trimDecisionRecords(id, seq - DECISION_RECORDS_KEPT_PER_DEVICE).catch((error: unknown) => deps.warn(error, 'decision records not trimmed; the next 20th check trims them', deviceId));
}

const CAPPED_MESSAGE = "the deployment's offer caps (new offers a minute, or devices updating at once) hold this device back for now; check again later";

function nextMinute(at: Date): Date {
  return new Date((Math.floor(at.getTime() / 60_000) + 1) * 60_000);
}

/** The device's health since its check before, counted for each deployment that watches it. */
function countHealth(deps: DeviceCheckDeps, device: Device, input: DeviceCheckInput, health: HealthSnapshot, active: readonly DecisionDeployment[]): void {
  if (!active.some((deployment) => deployment.watchesHealth)) return;
  const checking = { id: device.id, channelId: device.channelId, groupIds: device.groupIds, currentBuildNumber: input.currentBuildNumber, ...input.reported };
  const sides = healthSides(checking, active, (id) => deps.views.artifact(id));
  if (!device.health) {
    deps.health.countFirstReport(sides, health.at);
    return;
  }
  const increment = healthIncrement(device.health, health, deps.health.timeScale);
  if (increment) deps.health.count(sides, increment, device.health.at, health.at);
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
