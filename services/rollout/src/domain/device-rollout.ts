import { randomUUID } from 'node:crypto';
import { invalidArgument } from '@ota/errors';
import { DEFERRED_EVENT, STOP_STATUSES, STOPPED_EVENT } from '@ota/vocabulary';
import { devicesInProgress, InProgressCounts, minuteOf } from './offer-caps';
import { checkStateOf, type CheckState, type DeviceForCheckState } from './check-state';
import { decideOffer, healthPeriodStart, targetsDevice, type Decision, type DecisionDevice, type OfferOutcome } from '@ota/decision';
import { DEVICE_EVENTS, isInProgress, rankOf, statusOfEvent } from './device-status';
import { NO_STATUS, type DeviceStatusEntry } from './device-status-cache';
import type { DeploymentCounts } from './deployment-counts';
import { NO_CONFIRMATION } from './guardrails';
import type { Deployment } from './model';
import { takeCountedStep } from './counted-steps';
import type { DeviceReport, DeviceStateRecord, StatesPage, StatesPageRead } from './ports';
import type { Deployments } from './deployments';
import type { RolloutDeps } from './rollout-deps';

/** How many of a device's accepted reports its timeline lists at most. */
export const REPORTS_KEPT_PER_DEVICE = 100;

/** A report that is a line of the device's timeline and moves no status: a stop or a deferral. */
interface TimelineReport {
  projectId: string;
  deploymentId: string;
  deviceUuid: string;
  reason: string;
  detailJson: string;
  deferredUntil?: Date;
}

/**
 * The device side of a rollout: what a check decides and records, the lifecycle events devices
 * report, each device's status per deployment (in memory, the store the truth), and its timeline.
 */

/** The rolled_back reason of a trial the bootloader abandoned: the build crashed or did not boot. */
const TRIAL_ABANDONED = 'boot_failed';

export class DeviceRollout {
  constructor(
    private readonly deps: RolloutDeps,
    private readonly deployments: Deployments,
    private readonly counts: DeploymentCounts,
    private readonly now: () => Date,
  ) {
    // A device that put its update off holds no place while it waits (docs/api.md, "Offer caps").
    this.inProgress = new InProgressCounts(async (deploymentId) => {
      const [counts, deferrals] = await Promise.all([this.counts.read(deploymentId), this.deps.reports.deferrals(deploymentId, this.now())]);
      return Math.max(0, devicesInProgress(counts.byStatus) - deferrals.devices);
    }, () => this.now().getTime());
  }

  /** Each capped deployment's devices in progress, read at most once a second (offer-caps.ts). */
  private readonly inProgress: InProgressCounts;

  /** Names this replica's trial crashes in the health tallies: one writer per document. */
  private readonly trialCrashSource = `trial-rollbacks-${randomUUID()}`;

  /** Each device's check_state, from this replica's view of the project's active deployments. */
  checkStates(projectId: string, devices: readonly DeviceForCheckState[]): CheckState[] {
    const active = this.deps.views.activeDeployments(projectId);
    return devices.map((device) => checkStateOf(device, active));
  }

  listDeviceReports(projectId: string, deviceUuid: string, limit: number, since: Date | undefined): Promise<DeviceReport[]> {
    return this.deps.reports.listReports(projectId, deviceUuid, Math.min(Math.max(limit, 1), REPORTS_KEPT_PER_DEVICE), since);
  }

  async listDeviceStates(projectId: string, deploymentId: string): Promise<DeviceStateRecord[]> {
    const deployment = await this.deployments.findDeployment(projectId, deploymentId);
    const states = await this.deps.deviceStates.listStates(deploymentId);
    return states.map(this.stateShown(deployment));
  }

  /** A page of the deployment's states, in the order of the devices' UUIDs, of those at `page.status` as shown. */
  async readDeviceStatesPage(projectId: string, deploymentId: string, page: StatesPage): Promise<StatesPageRead> {
    const deployment = await this.deployments.findDeployment(projectId, deploymentId);
    return this.deps.deviceStates.readStatesPage(deploymentId, { ...page, lowestStored: page.status ? lowestStoredShownAs(deployment, page.status) : undefined }, this.stateShown(deployment));
  }

  /** A device silent past the confirm timeout is listed as the failure the summary counts it as. */
  private stateShown(deployment: Deployment): (state: DeviceStateRecord) => DeviceStateRecord {
    const timeout = silenceTimeoutOf(deployment);
    if (timeout === null) return (state) => state;
    const silentBefore = this.now().getTime() - timeout * 1000;
    return (state) => (isInProgress(state.status) && state.updatedAt.getTime() < silentBefore ? { ...state, status: 'failed', reason: NO_CONFIRMATION } : state);
  }

  async deleteDeviceStates(projectId: string, deviceUuid: string): Promise<void> {
    // Its statuses leave the counts of the deployments it was in: they are counted afresh.
    for (const deploymentId of await this.deps.deviceStates.deleteDeviceStates(projectId, deviceUuid)) this.counts.recountLater(deploymentId);
    // A deleted device that comes back (with the same derived UUID) starts afresh, on every replica.
    this.deps.statusCache.forgetDevice(deviceUuid);
    this.deps.events.deviceForgotten(deviceUuid);
  }

  /**
   * Registry's check offers the deployment's build to the device: confirmed from this replica's
   * view (a pause made here is applied before its answer) and the device's status, then recorded
   * as `offered` unless the device is further along.
   */
  async recordOffer(projectId: string, deploymentId: string, deviceUuid: string): Promise<OfferOutcome> {
    const deployment = this.deps.views.activeDeployments(projectId).find((candidate) => candidate.id === deploymentId);
    if (!deployment) return 'not_active';
    const known = await this.deviceStatus(deploymentId, deviceUuid);
    if (known.rolledBack) return 'rolled_back';
    if (known.rank < rankOf('offered')) {
      // A new offer: the caps say whether it may start now. A device offered before keeps its offer.
      if (await this.heldByCaps(deployment)) return 'capped';
      await this.record({ deploymentId, projectId, deviceUuid, status: 'offered', reason: '' });
    } else if (known.rank === rankOf('offered') && (await this.backFromDeferralWithoutRoom(deployment, deviceUuid))) {
      return 'capped';
    }
    return 'recorded';
  }

  /**
   * Whether the deployment's offer caps hold a new offer back (docs/api.md, "Offer caps"): the
   * devices in progress, from the counts (another replica's offers show within
   * STATUS_COUNTS_FLUSH_MS), then one of this minute's offers, taken in the store that every
   * replica shares.
   */
  private async heldByCaps(deployment: Deployment): Promise<boolean> {
    if (!deployment.caps) return false;
    const { maxInProgress, offersPerMinute } = deployment.caps;
    if (maxInProgress !== null && !(await this.inProgress.reserve(deployment.id, maxInProgress))) return true;
    if (offersPerMinute !== null && !(await this.deps.offerSlots.take(deployment.id, minuteOf(this.now()), offersPerMinute))) {
      if (maxInProgress !== null) this.inProgress.release(deployment.id);
      return true;
    }
    return false;
  }

  /**
   * A device that deferred its offer gave its place up meanwhile: back after its deferral and not
   * yet downloading, it goes on only when the cap has room for it again.
   */
  private async backFromDeferralWithoutRoom(deployment: Deployment, deviceUuid: string): Promise<boolean> {
    const maxInProgress = deployment.caps?.maxInProgress ?? null;
    if (maxInProgress === null) return false;
    const deferredUntil = await this.deps.reports.lastDeferral(deployment.id, deviceUuid);
    if (!deferredUntil || deferredUntil > this.now()) return false;
    return !(await this.inProgress.reserve(deployment.id, maxInProgress, true));
  }

  /** PREVIOUS RELEASE: decides from the in-memory views and records `offered` for an offer (DecideOffer, previous-release/handlers.ts). */
  async decideOffer(projectId: string, device: DecisionDevice): Promise<Decision<Deployment>> {
    const active = this.deps.views.activeDeployments(projectId);
    // Device statuses matter only for deployments that target the device: most checks of a
    // settled fleet target nothing, or find the status in memory.
    const targeting = active.filter((deployment) => targetsDevice(deployment, device));
    const statuses = await Promise.all(targeting.map((deployment) => this.deviceStatus(deployment.id, device.id)));
    const rolledBack = new Set(targeting.filter((_, index) => statuses[index]!.rolledBack).map((deployment) => deployment.id));
    const decision = decideOffer({
      device,
      activeDeployments: active,
      artifactOf: (id) => this.deps.views.artifact(id),
      rolledBack,
    });
    if (decision.status === 'offered') {
      const known = statuses[targeting.indexOf(decision.deployment)]!;
      if (known.rank < rankOf('offered')) {
        await this.record({ deploymentId: decision.deployment.id, projectId, deviceUuid: device.id, status: 'offered', reason: '' });
      }
    }
    return decision;
  }

  /**
   * Stores a lifecycle event before answering. The status never moves backwards; each `failed`
   * and the first `rolled_back` of a device count as failures of the deployment.
   */
  async recordDeviceEvent(input: {
    projectId: string;
    deploymentId: string;
    deviceUuid: string;
    event: string;
    reason: string;
    buildNumber?: number;
    detailJson: string;
    deferredUntil?: Date;
  }): Promise<{ accepted: boolean; finalStatus: string }> {
    if (input.event === STOPPED_EVENT) return this.recordStop(input);
    if (input.event === DEFERRED_EVENT) return this.recordDeferral(input);
    const status = statusOfEvent(input.event);
    if (!status) throw invalidArgument(`unknown event "${input.event}"; use one of ${[...DEVICE_EVENTS, STOPPED_EVENT, DEFERRED_EVENT].join(', ')}`);
    await this.requireDeployment(input.projectId, input.deploymentId);
    const report: DeviceReport = {
      id: randomUUID(),
      projectId: input.projectId,
      deploymentId: input.deploymentId,
      deviceUuid: input.deviceUuid,
      event: input.event,
      status,
      buildNumber: input.buildNumber,
      reason: input.reason,
      detailJson: input.detailJson,
      createdAt: this.now(),
    };
    // The report (for the device's timeline) rides in the event's insert, so both are durable
    // before the answer in one write. A repeated status stores nothing: a device resends
    // `confirmed` and `rolled_back` until one is accepted, and a repeat changes nothing, its
    // timeline included (docs/api.md, "Status reports"). Every `failed` is an event of its own.
    const { after, reportStored } = await this.record({ deploymentId: input.deploymentId, projectId: input.projectId, deviceUuid: input.deviceUuid, status, reason: input.reason }, report);
    // The check records `offered` with no report: the device's own first `offered` is then stored
    // alone, once (its repeats collide with it).
    if (!reportStored && status === 'offered') await this.deps.reports.insertFirstReport(report);
    if (status === 'rolled_back' && input.reason === TRIAL_ABANDONED && reportStored) await this.countTrialCrash(input.projectId, input.deploymentId);
    // A failure may trip a guardrail: judged before the answer, so that the pause is in place when
    // the reporting device hears back. The report is stored either way; a judgement that fails is
    // made again by the timer.
    if ((status === 'failed' || status === 'rolled_back') && this.deployments.guardedActive(input.projectId, input.deploymentId)) {
      await this.deployments.enforceGuardrails(input.deploymentId).catch((error: unknown) => this.deps.warn(error, 'judging guardrails after a failure failed; the timer judges again'));
    }
    return { accepted: true, finalStatus: after.status };
  }

  /**
   * A device stopped an update because its offer no longer stands (docs/api.md, "Stopping devices
   * mid-update"): a line of its timeline, once per reason, that moves no status and counts nothing.
   */
  private recordStop(input: TimelineReport): Promise<{ accepted: boolean; finalStatus: string }> {
    if (!(STOP_STATUSES as readonly string[]).includes(input.reason)) {
      throw invalidArgument(`a stopped report's reason is one of ${STOP_STATUSES.join(', ')}`);
    }
    return this.recordTimelineLine(input, STOPPED_EVENT, `${STOPPED_EVENT}:${input.reason}`);
  }

  /**
   * A device put the offer off (docs/api.md, "Deferral"): a line of its timeline, once per time it
   * gave, that moves no status and counts as no failure, and a device of the summary's deferrals.
   */
  private recordDeferral(input: TimelineReport): Promise<{ accepted: boolean; finalStatus: string }> {
    if (!input.deferredUntil) throw invalidArgument('deferred_until is required with deferred');
    return this.recordTimelineLine(input, DEFERRED_EVENT, `${DEFERRED_EVENT}:${input.deferredUntil.getTime()}`);
  }

  /** Stores a report that moves no status, once per `once`, and answers the status the device has. */
  private async recordTimelineLine(input: TimelineReport, event: string, once: string): Promise<{ accepted: boolean; finalStatus: string }> {
    await this.requireDeployment(input.projectId, input.deploymentId);
    const { status } = await this.deviceStatus(input.deploymentId, input.deviceUuid);
    const report: DeviceReport = {
      id: randomUUID(),
      projectId: input.projectId,
      deploymentId: input.deploymentId,
      deviceUuid: input.deviceUuid,
      event,
      status,
      buildNumber: undefined,
      reason: input.reason,
      detailJson: input.detailJson,
      createdAt: this.now(),
      ...(input.deferredUntil ? { deferredUntil: input.deferredUntil } : {}),
    };
    await this.deps.reports.insertFirstReport(report, once);
    return { accepted: true, finalStatus: status };
  }

  /** 404 unless the deployment is the project's. */
  /**
   * A trial the bootloader abandoned (`boot_failed`: the build crashed before it was confirmed, or
   * did not boot) is an abnormal reset of the deployment's build. The device's next check runs the
   * earlier build and says nothing of it (its port charges that reset to no build), so it is
   * counted here, on the deployment's `updated` side, with the device that ran it (docs/api.md,
   * "Device health"), for a deployment that watches device health.
   */
  private async countTrialCrash(projectId: string, deploymentId: string): Promise<void> {
    const deployment = this.deps.views.activeDeployments(projectId).find((candidate) => candidate.id === deploymentId) ?? (await this.deployments.findDeployment(projectId, deploymentId));
    if (!deployment.guardrails.healthRegression) return;
    const tally = { projectId, deploymentId, side: 'updated' as const, periodStart: healthPeriodStart(this.now()), devices: 1, deviceSeconds: 0, abnormalResets: 1, source: this.trialCrashSource };
    await this.deps.health.add([tally]);
  }

  private async requireDeployment(projectId: string, deploymentId: string): Promise<void> {
    // Reports are almost always for an active deployment, which this replica holds in memory; any
    // other (paused, completed, or not yet in this replica's view) is read from the store.
    const active = this.deps.views.activeDeployments(projectId).some((deployment) => deployment.id === deploymentId);
    if (!active) await this.deployments.findDeployment(projectId, deploymentId);
  }

  /**
   * Stores the event (the truth), raises the in-memory status, moves the status the device is
   * counted under, counts what moved and tells the other replicas.
   */
  private async record(
    event: { deploymentId: string; projectId: string; deviceUuid: string; status: string; reason: string },
    report?: DeviceReport,
  ): Promise<{ after: DeviceStatusEntry; reportStored: boolean }> {
    const at = report?.createdAt ?? this.now();
    const { newlyStored, reportStored } = await this.deps.deviceStates.recordEvent({ ...event, rank: rankOf(event.status), at, report });
    const after = this.deps.statusCache.merge(event.deploymentId, event.deviceUuid, {
      status: event.status,
      rank: rankOf(event.status),
      rolledBack: event.status === 'rolled_back',
    });
    const known = this.deps.statusCache.get(event.deploymentId, event.deviceUuid)?.counted;
    const { step, counted } = await takeCountedStep(this.deps.deviceStates, { ...event, at }, known);
    this.deps.statusCache.merge(event.deploymentId, event.deviceUuid, { ...NO_STATUS, counted });
    this.counts.eventStored(event.deploymentId, at, { status: event.status, reason: event.reason, newlyStored }, step);
    this.deps.events.deviceStatusChanged(event.deploymentId, event.deviceUuid, after);
    return { after, reportStored };
  }

  /** The device's highest status in the deployment: from memory, or once from the store. */
  private async deviceStatus(deploymentId: string, deviceUuid: string): Promise<DeviceStatusEntry> {
    const cached = this.deps.statusCache.get(deploymentId, deviceUuid);
    if (cached) return cached;
    const stored = await this.deps.deviceStates.highestStatus(deploymentId, deviceUuid);
    return this.deps.statusCache.merge(deploymentId, deviceUuid, stored ?? { ...NO_STATUS, counted: 'pending' });
  }
}

/** The confirm timeout after which a silent device in progress is shown failed; null when none applies (none set, or a draft). */
function silenceTimeoutOf(deployment: Deployment): number | null {
  return deployment.state === 'draft' ? null : deployment.guardrails.confirmTimeoutSeconds;
}

/**
 * The lowest stored status of a device shown at `status` (a status only rises, and stateShown
 * turns only a silent device in progress into a failure): where the store's read of a page at one
 * status may start.
 */
function lowestStoredShownAs(deployment: Deployment, status: string): string {
  return status === 'failed' && silenceTimeoutOf(deployment) !== null ? 'download_started' : status;
}
