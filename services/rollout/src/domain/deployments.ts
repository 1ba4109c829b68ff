import type { OutboundCall } from '@ota/logging';
import { randomUUID } from 'node:crypto';
import { validMaintenanceSchedule, windowStateAt, type MaintenanceSchedule } from '@ota/decision';
import { conflict, failedPrecondition, invalidArgument, isDomainError, notFound } from '@ota/errors';
import { holdsOnBuild, type BuildHold } from './build-holds';
import { CoalescedRuns } from './coalesced-runs';
import type { DeploymentCounts } from './deployment-counts';
import type { DownloadCounts } from './downloads';
import { hasGuardrails, NO_CONFIRMATION, silentByStatus, silentDevices, trippedGuardrail, validGuardrails, withSilentAsFailed, type GuardrailFigures, type Guardrails } from './guardrails';
import type { HealthComparison, HealthTally } from './health-regression';
import { devicesInProgress, hasOfferCaps, minuteOf, validOfferCaps, type OfferCaps } from './offer-caps';
import { asIfActive, PreviewTally } from './preview';
import { dueStage, validStages, type Stage } from './stages';
import type { Deployment, DeploymentState } from './model';
import { applyTransition, guardrailPauseOf, stageAdvanceOf, validPercentage, type TransitionChange, type TransitionRequest } from './transitions';
import type { Deferrals } from './ports';
import type { RolloutDeps } from './rollout-deps';

const ROLLOUT_STRATEGIES = ['immediate'];

export interface DeploymentSummary {
  /** The deployment the summary is of, with the summary's failure count. */
  deployment: Deployment;
  devicesByStatus: Map<string, number>;
  failureCount: number;
  failuresByReason: Map<string, number>;
  /** Devices that put the offer off to a time still ahead, and the latest of those times. */
  deferrals: Deferrals;
  /** What holds the devices not yet offered back now. */
  heldNow: HeldNow;
}

/** What holds a preview's offered devices back now: a closed window, and the room the caps leave. */
export interface HeldNow {
  windowOpensAt: Date | null;
  capsRoom: number | null;
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
  maintenance: MaintenanceSchedule | null;
  caps: OfferCaps | null;
}

/**
 * A deployment's lifecycle: created, read, moved between states by a person, by its guardrails and
 * by its staged plan, summarized and previewed. The device side (device-rollout.ts) asks it for a
 * deployment and to judge guardrails after a failure.
 */
const RETIRABLE = ['artifact', 'group', 'channel'] as const;
type RetirableKind = (typeof RETIRABLE)[number];
const UNFINISHED: readonly DeploymentState[] = ['draft', 'active', 'paused'];
/** How long a creation waits for a fence on its targets to be lifted or settled; a fence decides within one read of the deployments. */
const FENCE_DECISION_WAIT_MS = 5_000;
const FENCE_POLL_MS = 20;

/** What a deployment uses, as fences name it: its build, its groups and its channels. */
function targetsOf(deployment: Pick<Deployment, 'artifactId' | 'targetGroupIds' | 'targetChannelIds'>): string[] {
  return [`artifact:${deployment.artifactId}`, ...deployment.targetGroupIds.map((id) => `group:${id}`), ...deployment.targetChannelIds.map((id) => `channel:${id}`)];
}

/** The conflict of an If-Match that names a version the deployment has left. */
function changedSince(expectedVersion: number, now: Deployment): Error {
  return conflict(
    `the deployment changed since version ${expectedVersion}: it is now ${now.state} at ${now.rolloutPercentage}% (version ${now.version}); read it again and decide`,
  );
}

/** Why a creation was refused, in the words the API uses for the same mistakes made alone. */
function refusalOf(fenced: readonly string[]): string {
  const ids = (kind: RetirableKind) => fenced.filter((target) => target.startsWith(`${kind}:`)).map((target) => target.slice(kind.length + 1));
  if (ids('artifact').length > 0) return 'the artifact is archived and cannot be deployed';
  if (ids('group').length > 0) return `target_group_ids names no group of this project: ${ids('group').join(', ')}`;
  return `target_channel_ids names no channel of this project: ${ids('channel').join(', ')}`;
}

/** How often a transition without an expected version is judged again after losing its version to a racing one. */
const TRANSITION_ATTEMPTS = 25;

export class Deployments {
  private readonly guardrailRuns = new CoalescedRuns<void>();

  constructor(
    private readonly deps: RolloutDeps,
    private readonly counts: DeploymentCounts,
    private readonly now: () => Date,
  ) {}

  async createDeployment(input: NewDeployment, call: OutboundCall): Promise<Deployment> {
    const guardrails = validGuardrails(input.guardrails);
    const stages = validStages(input.stages);
    const maintenance = input.maintenance && validMaintenanceSchedule(input.maintenance);
    const caps = hasOfferCaps(input.caps) ? validOfferCaps(input.caps) : null;
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
      maintenance,
      caps,
    };
    await this.counts.start(deployment.id, now);
    await this.deps.deployments.insertDeployment(deployment);
    // Stored first, then the fences read: an archive or a deletion that fences after this read
    // finds the deployment in its way (docs/architecture.md, "Invariants across services"). A
    // fence still deciding is waited for: it is lifted if it found this deployment (which then
    // stands), and settled if not (then this one yields): one of the two always wins.
    const fenced = await this.decidedFences(targetsOf(deployment));
    if (fenced.length > 0) {
      await this.deps.deployments.deleteDeployment(deployment.id);
      throw invalidArgument(refusalOf(fenced));
    }
    await this.changed(deployment);
    return deployment;
  }

  /**
   * Fences a build, group or channel against new deployments, before it is archived or deleted,
   * and answers the draft, active or paused deployments that use it; with any, the fence is
   * lifted again and the caller refuses. Fenced first, then the deployments read: a creation that
   * reads the fences before this write is found here, and one that reads after it refuses itself,
   * so no deployment of an archived build or a deleted target is ever kept, under any interleaving
   * (docs/architecture.md, "Invariants across services"). `retire: false` lifts every fence of it.
   */
  async retireTarget(projectId: string, kind: string, id: string, retire: boolean): Promise<Deployment[]> {
    if (!RETIRABLE.includes(kind as RetirableKind)) throw invalidArgument(`kind must be one of ${RETIRABLE.join(', ')}`);
    const target = `${kind}:${id}`;
    if (!retire) {
      await this.deps.deployments.liftFence({ target });
      return [];
    }
    const fenceId = await this.deps.deployments.fence(projectId, target);
    const inTheWay = (await this.deps.deployments.listDeployments(projectId)).filter(
      (deployment) => UNFINISHED.includes(deployment.state) && targetsOf(deployment).includes(target),
    );
    if (inTheWay.length > 0) await this.deps.deployments.liftFence({ fenceId });
    else await this.deps.deployments.settleFence(fenceId);
    return inTheWay;
  }

  /**
   * The targets whose fences stand, once none is still deciding (at most FENCE_DECISION_WAIT_MS:
   * a retirement that stopped between its fence and its decision counts as one that went ahead).
   */
  private async decidedFences(targets: readonly string[]): Promise<string[]> {
    const giveUpAt = Date.now() + FENCE_DECISION_WAIT_MS;
    for (;;) {
      const fences = await this.deps.deployments.fencesOn(targets);
      if (fences.every((fence) => fence.settled) || Date.now() >= giveUpAt) return [...new Set(fences.map((fence) => fence.target))];
      await new Promise((resolve) => setTimeout(resolve, FENCE_POLL_MS));
    }
  }

  async getDeployment(projectId: string, deploymentId: string): Promise<Deployment> {
    return (await this.withFailureCounts([await this.findDeployment(projectId, deploymentId)]))[0]!;
  }

  async listDeployments(projectId: string): Promise<Deployment[]> {
    return this.withFailureCounts(await this.deps.deployments.listDeployments(projectId));
  }

  /** Every project's active deployments, from the store: what registry's check views load. */
  listActiveDeployments(): Promise<Deployment[]> {
    return this.deps.deployments.listActiveDeployments();
  }

  async findDeployment(projectId: string, deploymentId: string): Promise<Deployment> {
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

  /**
   * Applies a transition. With `expectedVersion` (the caller's If-Match) it applies only to that
   * version: one that moved on since is a conflict whose message says what it is now, and so is
   * another transition claiming the same version first (docs/api.md, "Changing a deployment safely").
   */
  async transition(projectId: string, deploymentId: string, request: TransitionRequest, expectedVersion?: number): Promise<Deployment> {
    // Without an expected version the transition applies to whatever the deployment is when it
    // lands: a version claimed first by a racing transition is read again and judged again, a
    // bounded number of times (docs/api.md, "Changing a deployment safely").
    for (let attempt = 1; ; attempt += 1) {
      const deployment = await this.findDeployment(projectId, deploymentId);
      if (expectedVersion !== undefined && deployment.version !== expectedVersion) throw changedSince(expectedVersion, deployment);
      const change = { ...applyTransition(deployment, request, this.now()), updatedAt: this.effectTime(deployment) };
      const updated = await this.deps.deployments.applyTransition(deployment.id, deployment.version, change);
      if (!updated && expectedVersion !== undefined) throw changedSince(expectedVersion, (await this.deps.deployments.findDeployment(deployment.id)) ?? deployment);
      if (!updated && attempt < TRANSITION_ATTEMPTS) continue;
      if (!updated) throw failedPrecondition(`the deployment changed ${TRANSITION_ATTEMPTS} times while this transition was applied; read it again and retry`);
      return this.transitioned(deployment, change, updated);
    }
  }

  private async transitioned(deployment: Deployment, change: TransitionChange & { updatedAt: Date }, updated: Deployment): Promise<Deployment> {
    await this.changed(updated);
    // The answer (and the audit made of it) is the deployment as this transition left it: the
    // store, read back, may already hold a later one.
    const applied: Deployment = { ...deployment, ...change, version: deployment.version + 1 };
    // Its counts are final now but for late reports: counted afresh once, so that they are exact.
    if (applied.state === 'completed' || applied.state === 'cancelled') this.counts.recountLater(applied.id);
    return (await this.withFailureCounts([applied]))[0]!;
  }

  /**
   * Devices per status and failures per reason, from the deployment's counts (nothing is counted
   * here). With a confirm timeout, devices silent past it are failures with reason `no_confirmation`.
   */
  async deploymentSummary(projectId: string, deploymentId: string): Promise<DeploymentSummary> {
    const deployment = await this.findDeployment(projectId, deploymentId);
    const [{ byStatus: devicesByStatus, failuresByReason }, recentByStatus, deferrals] = await Promise.all([
      this.counts.read(deploymentId),
      this.recentByStatus(deployment),
      this.deps.reports.deferrals(deploymentId, this.now()),
    ]);
    const silent = recentByStatus ? silentByStatus(devicesByStatus, recentByStatus) : new Map<string, number>();
    const silentTotal = [...silent.values()].reduce((sum, count) => sum + count, 0);
    if (silentTotal > 0) failuresByReason.set(NO_CONFIRMATION, (failuresByReason.get(NO_CONFIRMATION) ?? 0) + silentTotal);
    const failureCount = [...failuresByReason.values()].reduce((sum, count) => sum + count, 0);
    // A silent device is a failure in every count, the devices per status too (docs/api.md, "Silent devices").
    return {
      deployment: { ...deployment, failureCount },
      devicesByStatus: withSilentAsFailed(devicesByStatus, silent),
      failureCount,
      failuresByReason,
      deferrals,
      heldNow: await this.heldNow(deployment, deferrals),
    };
  }

  /**
   * What a check of each of the project's devices would answer now, were the deployment active
   * (as it is, or as it would start or resume): the check's decideOffer over the active
   * deployments, the registry's stored devices and the rolled-back records, page by page. With
   * `idPrefix`, only the devices whose UUID begins with it: one part of a large fleet.
   */
  async previewDeployment(
    projectId: string,
    deploymentId: string,
    idPrefix: string,
    call: OutboundCall & { deadline: Date | number },
  ): Promise<{ state: DeploymentState; tally: PreviewTally; heldNow: HeldNow }> {
    const stored = await this.findDeployment(projectId, deploymentId);
    const deployment = asIfActive(stored, this.now());
    const active = [...this.deps.views.activeDeployments(projectId).filter((other) => other.id !== deployment.id), deployment];
    const rolledBack = await this.deps.deviceStates.rolledBackDevices(active.map((candidate) => candidate.id));
    const none = new Set<string>();
    const tally = new PreviewTally(deployment, active, (id) => this.deps.views.artifact(id), (deviceUuid) => rolledBack.get(deviceUuid) ?? none);
    // Only the groups some deployment targets can change a decision: the rest are not read.
    const targetedGroups = [...new Set(active.flatMap((candidate) => candidate.targetGroupIds))];
    for await (const page of this.deps.fleet.devices(projectId, idPrefix, targetedGroups, call)) for (const device of page) tally.add(device);
    return { state: stored.state, tally, heldNow: await this.heldNow(deployment) };
  }

  /**
   * What holds the offered devices of a preview back now (docs/api.md, "Preview"): the maintenance
   * windows, when closed (read in the deployment's zone: the fleet's stored devices carry no
   * offset), and how many new offers the caps let start.
   */
  /** `deferrals`, when the caller read them already (the summary does), are not read again. */
  private async heldNow(deployment: Deployment, deferrals?: Deferrals): Promise<HeldNow> {
    const now = this.now();
    const window = deployment.maintenance ? windowStateAt(deployment.maintenance, now) : null;
    const windowOpensAt = window && !window.open ? window.opensAt : null;
    if (!deployment.caps) return { windowOpensAt, capsRoom: null };
    const { offersPerMinute, maxInProgress } = deployment.caps;
    const rooms = await Promise.all([
      offersPerMinute === null ? Infinity : this.deps.offerSlots.taken(deployment.id, minuteOf(now)).then((taken) => offersPerMinute - taken),
      // Devices that put their offer off hold no place (device-rollout.ts).
      maxInProgress === null
        ? Infinity
        : Promise.all([this.counts.read(deployment.id), deferrals ?? this.deps.reports.deferrals(deployment.id, now)]).then(
            ([counts, deferred]) => maxInProgress - Math.max(0, devicesInProgress(counts.byStatus) - deferred.devices),
          ),
    ]);
    return { windowOpensAt, capsRoom: Math.max(0, Math.min(...rooms)) };
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
      ...(deployment.guardrails.healthRegression ? { health: await this.deps.health.sums(deployment.id, since) } : {}),
    };
  }

  /**
   * Adds what registry's checks counted of device health, then judges the guardrails of the
   * deployments it is about, beside the answer (the supervision round judges them too).
   */
  async recordDeviceHealth(tallies: readonly HealthTally[]): Promise<void> {
    await this.deps.health.add(tallies);
    for (const deploymentId of new Set(tallies.map((tally) => tally.deploymentId))) {
      this.enforceGuardrails(deploymentId).catch((error: unknown) => this.deps.warn(error, `judging the guardrails of deployment ${deploymentId} failed; the next round tries again`));
    }
  }

  /** docs/api.md, "Device health": both sides per period, and the sums the guardrail judges now. */
  /**
   * How the images came to the devices of one deployment, or of every deployment of one build
   * (docs/api.md, "Delta patches"). A build no deployment of the project ships has none.
   */
  async downloads(projectId: string, of: { deploymentId: string } | { artifactId: string }): Promise<DownloadCounts> {
    if ('deploymentId' in of) return this.deps.deviceStates.downloadsOf([(await this.findDeployment(projectId, of.deploymentId)).id]);
    const ofBuild = (await this.deps.deployments.listDeployments(projectId)).filter((deployment) => deployment.artifactId === of.artifactId);
    return this.deps.deviceStates.downloadsOf(ofBuild.map((deployment) => deployment.id));
  }

  async deploymentHealth(projectId: string, deploymentId: string): Promise<{ periods: HealthTally[]; judged: HealthComparison; judgedSince: Date | null }> {
    const deployment = await this.findDeployment(projectId, deploymentId);
    const since = deployment.guardrailsJudgedSince ?? undefined;
    const [periods, judged] = await Promise.all([this.deps.health.periods(deployment.id), this.deps.health.sums(deployment.id, since)]);
    return { periods, judged, judgedSince: deployment.guardrailsJudgedSince ?? null };
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
      const updated = await this.deps.deployments.applyTransition(current.id, current.version, { ...fields, updatedAt: this.effectTime(current) });
      if (updated) {
        await this.changed(updated);
        this.deps.events.changedByItself(updated, action, details(updated));
        return;
      }
      current = await this.deps.deployments.findDeployment(deployment.id);
    }
  }

  /**
   * When a transition from `from` takes effect: now, but always after `from`'s own, so that the
   * transitions of a deployment are in the order of their versions by time too, whatever the
   * clocks of the replicas that made them (the audit is ordered by it: docs/api.md, "Audit event").
   */
  private effectTime(from: Deployment): Date {
    return new Date(Math.max(this.now().getTime(), from.updatedAt.getTime() + 1));
  }

  /** What holds the build back from more devices, read from the store now (build-holds.ts). */
  async buildHolds(projectId: string, artifactId: string, exceptId: string): Promise<BuildHold[]> {
    return holdsOnBuild(await this.deps.deployments.listDeployments(projectId), artifactId, exceptId);
  }

  countDeployments(projectId: string, states: string[], artifactId?: string): Promise<number> {
    const known: DeploymentState[] = ['draft', 'active', 'paused', 'completed', 'cancelled'];
    const unknown = states.filter((state) => !known.includes(state as DeploymentState));
    if (unknown.length > 0) throw invalidArgument(`unknown deployment states: ${unknown.join(', ')}`);
    return this.deps.deployments.countDeployments(projectId, states as DeploymentState[], artifactId);
  }

  /** Whether the deployment is active here and has guardrails: a failure report then judges them. */
  guardedActive(projectId: string, deploymentId: string): boolean {
    const deployment = this.deps.views.activeDeployments(projectId).find((candidate) => candidate.id === deploymentId);
    return deployment !== undefined && hasGuardrails(deployment.guardrails);
  }

  /** Applied here at once; other replicas, and registry's check views, are told before the caller hears back (RolloutEvents). */
  private async changed(deployment: Deployment): Promise<void> {
    this.deps.views.deploymentWritten(deployment);
    await this.deps.events.deploymentChanged(deployment);
  }
}
