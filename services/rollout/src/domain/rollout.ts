import type { RequestTrace } from '@ota/logging';
import { randomUUID } from 'node:crypto';
import { failedPrecondition, invalidArgument, isDomainError, notFound } from '@ota/errors';
import { checkStateOf, type CheckState, type DeviceForCheckState } from './check-state';
import { decideOffer, type Decision } from './decide';
import { DEVICE_EVENTS, isInProgress, rankOf, statusOfEvent } from './device-status';
import { NO_STATUS, type DeviceStatusCache, type DeviceStatusEntry } from './device-status-cache';
import { CoalescedRuns } from './coalesced-runs';
import { DeploymentCounts } from './deployment-counts';
import { hasGuardrails, NO_CONFIRMATION, silentByStatus, silentDevices, trippedGuardrail, validGuardrails, withSilentAsFailed, type GuardrailFigures, type Guardrails } from './guardrails';
import { asIfActive, PreviewTally } from './preview';
import { ReportTrimSchedule } from './report-trim-schedule';
import { dueStage, validStages, type Stage } from './stages';
import { targetsDevice } from './targeting';
import type { DecisionDevice, Deployment, DeploymentState } from './model';
import type { ArtifactCatalog, DeploymentStore, DeviceReport, DeviceReportStore, DeviceStateRecord, DeviceStateStore, Fleet, RolloutEvents, RolloutViews, StatusCountStore } from './ports';
import { applyTransition, guardrailPauseOf, stageAdvanceOf, validPercentage, type TransitionChange, type TransitionRequest } from './transitions';

const ROLLOUT_STRATEGIES = ['immediate'];

/** How many of a device's accepted reports its timeline keeps. */
export const REPORTS_KEPT_PER_DEVICE = 100;
/** A device's reports are trimmed on every tenth of its reports (so at most 109 are stored). */
const REPORT_TRIM_EVERY = 10;
/** Devices whose count towards the next trim is remembered (about 100 bytes each). */
const REPORT_TRIM_DEVICES = 100_000;

export interface DeploymentSummary {
  /** The deployment the summary is of, with the summary's failure count. */
  deployment: Deployment;
  devicesByStatus: Map<string, number>;
  failureCount: number;
  failuresByReason: Map<string, number>;
}

export interface RolloutDeps {
  deployments: DeploymentStore;
  deviceStates: DeviceStateStore;
  reports: DeviceReportStore;
  /** Each deployment's counts, kept as reports arrive (domain/deployment-counts.ts). */
  counts: StatusCountStore;
  /** How often a deployment whose counts keep changing is counted afresh from its events. */
  recountIntervalMs: number;
  catalog: ArtifactCatalog;
  fleet: Fleet;
  views: RolloutViews;
  events: RolloutEvents;
  statusCache: DeviceStatusCache;
  /** Logs work that failed off a request's path (a later run makes it good). */
  warn: (error: unknown, message: string) => void;
  now?: () => Date;
}

export interface NewDeployment {
  projectId: string;
  artifactId: string;
  targetGroupIds: string[];
  targetChannelIds: string[];
  rolloutPercentage?: number;
  rolloutStrategy: string;
  notes: string;
  start: boolean;
  guardrails: Guardrails;
  stages: Stage[];
}

export class Rollout {
  private readonly now: () => Date;
  private readonly reportTrims = new ReportTrimSchedule(REPORT_TRIM_EVERY, REPORT_TRIM_DEVICES);
  private readonly guardrailRuns = new CoalescedRuns<void>();
  readonly counts: DeploymentCounts;

  constructor(private readonly deps: RolloutDeps) {
    this.now = deps.now ?? (() => new Date());
    this.counts = new DeploymentCounts({ store: deps.counts, recountIntervalMs: deps.recountIntervalMs, now: this.now, warn: deps.warn });
  }

  async createDeployment(input: NewDeployment, call: RequestTrace): Promise<Deployment> {
    const guardrails = validGuardrails(input.guardrails);
    const stages = validStages(input.stages);
    const rolloutPercentage = validPercentage(input.rolloutPercentage ?? stages[0]?.percentage ?? 100);
    if (stages.length > 0 && rolloutPercentage !== stages[0]!.percentage) {
      throw invalidArgument('with stages, rollout_percentage is the first stage\'s percentage: leave it out or make them equal');
    }
    const rolloutStrategy = input.rolloutStrategy || 'immediate';
    if (!ROLLOUT_STRATEGIES.includes(rolloutStrategy)) {
      throw invalidArgument(`rollout_strategy must be one of ${ROLLOUT_STRATEGIES.join(', ')}`);
    }
    const artifact = await this.deps.catalog.getArtifact(input.projectId, input.artifactId, call).catch((error: unknown) => {
      if (isDomainError(error, 'NotFound')) throw invalidArgument('artifact_id names no artifact of this project');
      throw error;
    });
    if (artifact.archived) throw invalidArgument('the artifact is archived and cannot be deployed');
    this.deps.views.artifactSeen(artifact);

    const now = this.now();
    const deployment: Deployment = {
      id: randomUUID(),
      projectId: input.projectId,
      artifactId: artifact.id,
      buildNumber: artifact.buildNumber,
      versionLabel: artifact.versionLabel,
      state: input.start ? 'active' : 'draft',
      targetGroupIds: [...new Set(input.targetGroupIds)],
      targetChannelIds: [...new Set(input.targetChannelIds)],
      rolloutPercentage,
      rolloutStrategy,
      notes: input.notes,
      failureCount: 0,
      createdAt: now,
      startedAt: input.start ? now : null,
      updatedAt: now,
      version: 1,
      guardrails,
      stages,
      stage: { index: 0, enteredAt: input.start ? now : null },
      guardrailPause: null,
      guardrailsJudgedSince: null,
    };
    await this.counts.start(deployment.id, now);
    await this.deps.deployments.insertDeployment(deployment);
    this.changed(deployment);
    return deployment;
  }

  async getDeployment(projectId: string, deploymentId: string): Promise<Deployment> {
    return (await this.withFailureCounts([await this.findDeployment(projectId, deploymentId)]))[0]!;
  }

  async listDeployments(projectId: string): Promise<Deployment[]> {
    return this.withFailureCounts(await this.deps.deployments.listDeployments(projectId));
  }

  private async findDeployment(projectId: string, deploymentId: string): Promise<Deployment> {
    const deployment = await this.deps.deployments.findDeployment(deploymentId);
    if (!deployment || deployment.projectId !== projectId) throw notFound('deployment not found');
    return deployment;
  }

  /**
   * The failure counter: the failures the deployment's counts hold, plus the devices silent past a
   * confirm timeout: the same failures the summary counts.
   */
  private async withFailureCounts(deployments: Deployment[]): Promise<Deployment[]> {
    return Promise.all(
      deployments.map(async (deployment) => {
        const counts = await this.counts.read(deployment.id);
        const stored = [...counts.failuresByReason.values()].reduce((sum, count) => sum + count, 0);
        return { ...deployment, failureCount: stored + (await this.silentCount(deployment, counts.byStatus)) };
      }),
    );
  }

  /** Devices silent past the deployment's confirm timeout now; 0 without one, or before it started. */
  private async silentCount(deployment: Deployment, byStatus: ReadonlyMap<string, number>): Promise<number> {
    if (deployment.state === 'draft') return 0;
    const recent = this.recentByStatus(deployment);
    return recent ? silentDevices(byStatus, await recent) : 0;
  }

  async transition(projectId: string, deploymentId: string, request: TransitionRequest): Promise<Deployment> {
    const deployment = await this.findDeployment(projectId, deploymentId);
    const change = applyTransition(deployment, request, this.now());
    const updated = await this.deps.deployments.applyTransition(deployment.id, deployment.version, { ...change, updatedAt: this.now() });
    if (!updated) throw failedPrecondition('the deployment changed meanwhile; read it again and retry');
    this.changed(updated);
    // Its counts are final now but for late reports: counted afresh once, so that they are exact.
    if (updated.state === 'completed' || updated.state === 'cancelled') this.counts.recountLater(updated.id);
    return (await this.withFailureCounts([updated]))[0]!;
  }

  /**
   * Devices per status and failures per reason, from the deployment's counts (nothing is counted
   * here). With a confirm timeout, devices silent past it are failures with reason `no_confirmation`.
   */
  async deploymentSummary(projectId: string, deploymentId: string): Promise<DeploymentSummary> {
    const deployment = await this.findDeployment(projectId, deploymentId);
    const [{ byStatus: devicesByStatus, failuresByReason }, recentByStatus] = await Promise.all([this.counts.read(deploymentId), this.recentByStatus(deployment)]);
    const silent = recentByStatus ? silentByStatus(devicesByStatus, recentByStatus) : new Map<string, number>();
    const silentTotal = [...silent.values()].reduce((sum, count) => sum + count, 0);
    if (silentTotal > 0) failuresByReason.set(NO_CONFIRMATION, (failuresByReason.get(NO_CONFIRMATION) ?? 0) + silentTotal);
    const failureCount = [...failuresByReason.values()].reduce((sum, count) => sum + count, 0);
    // A silent device is a failure in every count, the devices per status too (docs/api.md, "Silent devices").
    return { deployment: { ...deployment, failureCount }, devicesByStatus: withSilentAsFailed(devicesByStatus, silent), failureCount, failuresByReason };
  }

  /**
   * What a check of each of the project's devices would answer now, were the deployment active
   * (as it is, or as it would start or resume): the check's decideOffer over the active
   * deployments, the registry's stored devices and the rolled-back records, page by page.
   */
  async previewDeployment(projectId: string, deploymentId: string, call: RequestTrace & { deadline: Date | number }): Promise<{ state: DeploymentState; tally: PreviewTally }> {
    const stored = await this.findDeployment(projectId, deploymentId);
    const deployment = asIfActive(stored, this.now());
    const active = [...this.deps.views.activeDeployments(projectId).filter((other) => other.id !== deployment.id), deployment];
    const rolledBack = await this.deps.deviceStates.rolledBackDevices(active.map((candidate) => candidate.id));
    const none = new Set<string>();
    const tally = new PreviewTally(deployment, active, (id) => this.deps.views.artifact(id), (deviceId) => rolledBack.get(deviceId) ?? none);
    for await (const page of this.deps.fleet.devices(projectId, call)) for (const device of page) tally.add(device);
    return { state: stored.state, tally };
  }

  /**
   * What the deployment's guardrails are judged on, counted by the store now: since a person last
   * resumed it from a guardrail pause, or from the start.
   */
  private async guardrailFigures(deployment: Deployment): Promise<GuardrailFigures> {
    const { reasonLimits } = deployment.guardrails;
    const now = this.now().getTime();
    const since = deployment.guardrailsJudgedSince ?? undefined;
    const windowStart = (seconds: number) => new Date(Math.max(now - seconds * 1000, since?.getTime() ?? 0));
    const [byStatus, recentByStatus, recentFailures] = await Promise.all([
      since ? this.deps.deviceStates.devicesByStatus(deployment.id, { since }) : this.counts.read(deployment.id).then((counts) => counts.byStatus),
      this.recentByStatus(deployment, since),
      Promise.all(reasonLimits.map((limit) => this.recentFailures(deployment, limit.reason, windowStart(limit.windowSeconds), since))),
    ]);
    return {
      confirmed: byStatus.get('confirmed') ?? 0,
      failed: (byStatus.get('failed') ?? 0) + (byStatus.get('rolled_back') ?? 0),
      timedOut: recentByStatus ? silentDevices(byStatus, recentByStatus) : 0,
      recentFailuresByReason: new Map(reasonLimits.map((limit, index) => [limit.reason, recentFailures[index]!])),
    };
  }

  /**
   * Failures with `reason` since `from`: the stored ones, and for `no_confirmation` also the devices
   * that went silent since then (their status is older than the timeout, and was reached after `from`
   * less the timeout), so that a reason limit on it trips like any other.
   */
  private async recentFailures(deployment: Deployment, reason: string, from: Date, since: Date | undefined): Promise<number> {
    const stored = this.deps.deviceStates.countRecentFailures(deployment.id, reason, from);
    const timeout = deployment.guardrails.confirmTimeoutSeconds;
    if (reason !== NO_CONFIRMATION || timeout === null) return stored;
    const reachedFrom = new Date(Math.max(from.getTime() - timeout * 1000, since?.getTime() ?? 0));
    const [count, reached, recent] = await Promise.all([stored, this.deps.deviceStates.devicesByStatus(deployment.id, { since: reachedFrom }), this.recentByStatus(deployment, since)!]);
    return count + silentDevices(reached, recent);
  }

  /** Devices per status reached within the confirm timeout (and since `since`); undefined without one. */
  private recentByStatus(deployment: Deployment, since?: Date): Promise<Map<string, number>> | undefined {
    const timeout = deployment.guardrails.confirmTimeoutSeconds;
    if (timeout === null) return undefined;
    const from = this.now().getTime() - timeout * 1000;
    return this.deps.deviceStates.devicesByStatus(deployment.id, { since: new Date(Math.max(from, since?.getTime() ?? 0)) });
  }

  /**
   * Judges an active deployment's guardrails on the store's figures now, and pauses it when one
   * trips. Calls during a run share the next one; replicas racing to pause it make one pause.
   */
  enforceGuardrails(deploymentId: string): Promise<void> {
    return this.guardrailRuns.run(deploymentId, async () => {
      const deployment = await this.deps.deployments.findDeployment(deploymentId);
      if (!deployment || deployment.state !== 'active' || !hasGuardrails(deployment.guardrails)) return;
      const figures = await this.guardrailFigures(deployment);
      const trip = trippedGuardrail(deployment.guardrails, figures);
      if (!trip) return;
      await this.changeByItself(deployment, (current, now) => guardrailPauseOf(current, trip, now), 'deployment.paused', () => ({
        automatic: true,
        guardrail: trip.guardrail,
        detail: trip.detail,
        figures: trip.figures,
      }));
    });
  }

  /**
   * One round of what deployments do by themselves, run by every replica on a timer: the
   * guardrails of each active deployment that has them (silent devices and windows move with
   * time), then the ramp of each staged one whose stage is due.
   */
  async superviseActive(): Promise<void> {
    const active = await this.deps.deployments.listActiveDeployments();
    for (const deployment of active) {
      try {
        if (hasGuardrails(deployment.guardrails)) await this.enforceGuardrails(deployment.id);
        if (deployment.stages.length > 0) await this.advanceStage(deployment);
      } catch (error) {
        this.deps.warn(error, `supervising deployment ${deployment.id} failed; the next round tries again`);
      }
    }
  }

  private async advanceStage(deployment: Deployment): Promise<void> {
    const due = (current: Deployment, now: Date): TransitionChange | null => {
      const index = dueStage(current.stages, current.stage, now);
      return index === null ? null : stageAdvanceOf(current, index, now);
    };
    if (!due(deployment, this.now())) return;
    // Read again: a guardrail may have paused it just now, and the version must be current.
    const current = await this.deps.deployments.findDeployment(deployment.id);
    if (!current) return;
    await this.changeByItself(current, due, 'deployment.ramped', (updated) => ({
      automatic: true,
      stage: updated.stage.index,
      rollout_percentage: updated.rolloutPercentage,
    }));
  }

  /**
   * Applies a change the deployment makes by itself. The store lets one change claim each version,
   * so replicas making the same change make it once; the loser reads the deployment again and asks
   * `change` whether anything is left to do.
   */
  private async changeByItself(
    deployment: Deployment,
    change: (current: Deployment, now: Date) => TransitionChange | null,
    action: 'deployment.paused' | 'deployment.ramped',
    details: (updated: Deployment) => Record<string, unknown>,
  ): Promise<void> {
    let current: Deployment | null = deployment;
    for (let attempt = 0; attempt < 3 && current; attempt += 1) {
      const now = this.now();
      const fields = change(current, now);
      if (!fields) return;
      const updated = await this.deps.deployments.applyTransition(current.id, current.version, { ...fields, updatedAt: now });
      if (updated) {
        this.changed(updated);
        this.deps.events.changedByItself(updated, action, details(updated));
        return;
      }
      current = await this.deps.deployments.findDeployment(deployment.id);
    }
  }

  /** Each device's check_state, from this replica's view of the project's active deployments. */
  checkStates(projectId: string, devices: readonly DeviceForCheckState[]): CheckState[] {
    const active = this.deps.views.activeDeployments(projectId);
    return devices.map((device) => checkStateOf(device, active));
  }

  listDeviceReports(projectId: string, deviceId: string, limit: number, since: Date | undefined): Promise<DeviceReport[]> {
    return this.deps.reports.listReports(projectId, deviceId, Math.min(Math.max(limit, 1), REPORTS_KEPT_PER_DEVICE), since);
  }

  async listDeviceStates(projectId: string, deploymentId: string): Promise<DeviceStateRecord[]> {
    const deployment = await this.findDeployment(projectId, deploymentId);
    const states = await this.deps.deviceStates.listStates(deploymentId);
    const timeout = deployment.guardrails.confirmTimeoutSeconds;
    if (timeout === null || deployment.state === 'draft') return states;
    // A device silent past the confirm timeout is listed as the failure the summary counts it as.
    const silentBefore = this.now().getTime() - timeout * 1000;
    return states.map((state) => (isInProgress(state.status) && state.updatedAt.getTime() < silentBefore ? { ...state, status: 'failed', reason: NO_CONFIRMATION } : state));
  }

  countDeployments(projectId: string, states: string[], artifactId?: string): Promise<number> {
    const known: DeploymentState[] = ['draft', 'active', 'paused', 'completed', 'cancelled'];
    const unknown = states.filter((state) => !known.includes(state as DeploymentState));
    if (unknown.length > 0) throw invalidArgument(`unknown deployment states: ${unknown.join(', ')}`);
    return this.deps.deployments.countDeployments(projectId, states as DeploymentState[], artifactId);
  }

  async deleteDeviceStates(projectId: string, deviceId: string): Promise<void> {
    // Its statuses leave the counts of the deployments it was in: they are counted afresh.
    for (const deploymentId of await this.deps.deviceStates.deleteDeviceStates(projectId, deviceId)) this.counts.recountLater(deploymentId);
    // A deleted device that comes back (with the same derived UUID) starts afresh, on every replica.
    this.deps.statusCache.forgetDevice(deviceId);
    this.deps.events.deviceForgotten(deviceId);
  }

  /** Decides from the in-memory views; records `offered` for an offer. */
  async decideOffer(projectId: string, device: DecisionDevice): Promise<Decision> {
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
        await this.record({ deploymentId: decision.deployment.id, projectId, deviceId: device.id, status: 'offered', reason: '' });
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
    deviceId: string;
    event: string;
    reason: string;
    buildNumber?: number;
    detailJson: string;
  }): Promise<{ accepted: boolean; finalStatus: string }> {
    const status = statusOfEvent(input.event);
    if (!status) throw invalidArgument(`unknown event "${input.event}"; use one of ${DEVICE_EVENTS.join(', ')}`);
    // Reports are almost always for an active deployment, which this replica holds in memory; any
    // other (paused, completed, or not yet in this replica's view) is read from the store.
    const active = this.deps.views.activeDeployments(input.projectId).some((deployment) => deployment.id === input.deploymentId);
    if (!active) await this.findDeployment(input.projectId, input.deploymentId);
    const report: DeviceReport = {
      id: randomUUID(),
      projectId: input.projectId,
      deploymentId: input.deploymentId,
      deviceId: input.deviceId,
      event: input.event,
      status,
      buildNumber: input.buildNumber,
      reason: input.reason,
      detailJson: input.detailJson,
      createdAt: this.now(),
    };
    // The report (for the device's timeline) is stored beside the status, not after it: both are
    // durable before the answer. A resent report is stored again, as the device sent it twice.
    const [after] = await Promise.all([
      this.record({ deploymentId: input.deploymentId, projectId: input.projectId, deviceId: input.deviceId, status, reason: input.reason }),
      this.deps.reports.insertReport(report),
    ]);
    // Off the answer's path, and only now and then (ReportTrimSchedule); a trim that fails is
    // made good by a later one.
    if (this.reportTrims.due(input.deviceId)) void this.deps.reports.trimReports(input.deviceId, REPORTS_KEPT_PER_DEVICE).catch(() => undefined);
    // A failure may trip a guardrail: judged before the answer, so that the pause is in place when
    // the reporting device hears back. The report is stored either way; a judgement that fails is
    // made again by the timer.
    if ((status === 'failed' || status === 'rolled_back') && this.guardedActive(input.projectId, input.deploymentId)) {
      await this.enforceGuardrails(input.deploymentId).catch((error: unknown) => this.deps.warn(error, 'judging guardrails after a failure failed; the timer judges again'));
    }
    return { accepted: true, finalStatus: after.status };
  }

  /**
   * Stores the event (the truth), then raises the in-memory status, counts the change and tells
   * the other replicas.
   */
  private async record(event: { deploymentId: string; projectId: string; deviceId: string; status: string; reason: string }): Promise<DeviceStatusEntry> {
    // The status before this event (from memory, or from the store on a miss) is read before the
    // insert, so that it never already holds the event: the counts move from it to the new status.
    const before = await this.deviceStatus(event.deploymentId, event.deviceId);
    const at = this.now();
    const { newlyStored } = await this.deps.deviceStates.recordEvent({ ...event, rank: rankOf(event.status), at });
    const after = this.deps.statusCache.merge(event.deploymentId, event.deviceId, {
      status: event.status,
      rank: rankOf(event.status),
      rolledBack: event.status === 'rolled_back',
    });
    this.counts.eventStored(event.deploymentId, at, { status: event.status, reason: event.reason, newlyStored }, before.status, after.status);
    this.deps.events.deviceStatusChanged(event.deploymentId, event.deviceId, after);
    return after;
  }

  /** The device's highest status in the deployment: from memory, or once from the store. */
  private async deviceStatus(deploymentId: string, deviceId: string): Promise<DeviceStatusEntry> {
    const cached = this.deps.statusCache.get(deploymentId, deviceId);
    if (cached) return cached;
    const stored = await this.deps.deviceStates.highestStatus(deploymentId, deviceId);
    return this.deps.statusCache.merge(deploymentId, deviceId, stored ?? NO_STATUS);
  }

  private guardedActive(projectId: string, deploymentId: string): boolean {
    const deployment = this.deps.views.activeDeployments(projectId).find((candidate) => candidate.id === deploymentId);
    return deployment !== undefined && hasGuardrails(deployment.guardrails);
  }

  private changed(deployment: Deployment): void {
    this.deps.views.deploymentWritten(deployment);
    this.deps.events.deploymentChanged(deployment);
  }
}
