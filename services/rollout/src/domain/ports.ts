import type { OutboundCall } from '@ota/logging';
import type { DeviceStatusEntry } from './device-status-cache';
import type { ArtifactSummary, DecisionViews } from '@ota/decision';
import type { Deployment, DeploymentState } from './model';
import type { HealthComparison, HealthTally } from './health-regression';
import type { FleetDevice } from './preview';
import type { CountDelta, CountedStep, StatusCounts } from './status-counts';
import type { DownloadCounts } from './downloads';

/** What a transition changes; the store applies it as one claimed version. */
export type TransitionFields = Pick<Deployment, 'state' | 'rolloutPercentage' | 'startedAt' | 'updatedAt' | 'stage' | 'guardrailPause' | 'guardrailsJudgedSince'>;

export interface DeploymentStore {
  insertDeployment(deployment: Deployment): Promise<void>;
  findDeployment(id: string): Promise<Deployment | null>;
  listDeployments(projectId: string): Promise<Deployment[]>;
  /** Every active deployment of every project, for the in-memory view. */
  listActiveDeployments(): Promise<Deployment[]>;
  /**
   * Applies a transition made from `fromVersion`. Of concurrent transitions from one version only
   * one succeeds; the others get null and must read the deployment again.
   */
  applyTransition(id: string, fromVersion: number, set: TransitionFields): Promise<Deployment | null>;
  countDeployments(projectId: string, states: readonly DeploymentState[], artifactId?: string): Promise<number>;
  /** Removes a deployment that was never announced (its creation was refused after it was stored). */
  deleteDeployment(id: string): Promise<void>;
  /**
   * Stores one fence against new deployments of `target` ("artifact:<id>", "group:<id>",
   * "channel:<id>"), unsettled until its retirement decides; its id lifts or settles it.
   */
  fence(projectId: string, target: string): Promise<string>;
  /** Lifts one fence by its id, or every fence of `target`. */
  liftFence(which: { fenceId: string } | { target: string }): Promise<void>;
  /** The retirement behind the fence goes ahead: the fence stays. */
  settleFence(fenceId: string): Promise<void>;
  /** The fences on any of `targets`, each with whether its retirement has decided. */
  fencesOn(targets: readonly string[]): Promise<Array<{ target: string; settled: boolean }>>;
}

export interface DeviceStateRecord {
  deviceUuid: string;
  status: string;
  reason: string;
  updatedAt: Date;
}

/** A page of a deployment's per-device states: at most `limit` after the device UUID `afterId`, of those at `status` now. */
export interface StatesPage {
  limit: number;
  afterId?: string;
  status?: string;
}

/** A states page as the store reads it. */
export interface StoredStatesPage extends StatesPage {
  /**
   * The lowest stored status a device shown at `status` can be at: the store may leave out the
   * devices whose status is below it. None: every device is read.
   */
  lowestStored?: string;
}

export interface StatesPageRead {
  states: DeviceStateRecord[];
  total: { count: number; estimated: boolean };
  nextAfterId?: string;
  /** Devices read from the store for this page. */
  read: number;
}

export interface DeviceEvent {
  deploymentId: string;
  projectId: string;
  deviceUuid: string;
  status: string;
  rank: number;
  reason: string;
  at: Date;
  /** The report the event came from, when a device sent one (an offer has none). */
  report?: DeviceReport;
}


/** Each deployment's new offers per clock minute, shared by the replicas (offer-caps.ts). */
export interface OfferSlotStore {
  /** Takes one of the deployment's `perMinute` offers of `minute`; false when all are taken. */
  take(deploymentId: string, minute: Date, perMinute: number): Promise<boolean>;
  /** How many of `minute`'s offers the deployment made. */
  taken(deploymentId: string, minute: Date): Promise<number>;
}

/** Each deployment's device health per period and side (health-regression.ts). */
export interface HealthTallyStore {
  /** Adds each tally to its deployment's period and side. */
  add(tallies: readonly HealthTally[]): Promise<void>;
  /** The deployment's periods, oldest first. */
  periods(deploymentId: string): Promise<HealthTally[]>;
  /**
   * Both sides' sums: devices over every period, hours and abnormal resets over the periods that
   * began at or after `since` (all of them without it).
   */
  sums(deploymentId: string, since?: Date): Promise<HealthComparison>;
}

export interface DeviceStateStore {
  /**
   * Stores that the device reached `status` in the deployment. Each status is stored once per
   * device and deployment, except `failed`, of which every report is kept (each one counts). The
   * device's status is the highest-ranked one stored, so it can never move backwards.
   *
   * The event's report rides in the same insert when there is one (`reportStored`), so that a
   * status report costs one insert (docs/architecture.md, "A status report, hop by hop"); a
   * repeated status stores nothing, its report included.
   */
  recordEvent(event: DeviceEvent): Promise<{ newlyStored: boolean; reportStored: boolean }>;
  /** How the images of the deployments' devices came, from each device's first `downloaded` report. */
  downloadsOf(deploymentIds: readonly string[]): Promise<DownloadCounts>;
  /** The device's highest stored status in the deployment, and its counted one; null when it has none. */
  highestStatus(deploymentId: string, deviceUuid: string): Promise<DeviceStatusEntry | null>;
  /**
   * Moves the device's counted status one step, once: a step is keyed by the status it leaves, so
   * of the reports that race to move a device out of a status, on any replica, exactly one does
   * (docs/architecture.md, "Counts under races"). False when another moved it out of `from` first.
   */
  claimCountedStep(step: CountedStep): Promise<boolean>;
  /** The status the device is counted under: the end of its steps, `pending` when it has none. */
  countedStatus(deploymentId: string, deviceUuid: string): Promise<string>;
  /** Devices per counted status, from the steps (those taken before `before`, when given). */
  countedByStatus(deploymentId: string, before?: Date): Promise<Map<string, number>>;
  /**
   * Takes the step of each device whose counted status is below its highest stored one (a
   * replica stopped between the two writes, or the device reported before steps were kept);
   * answers how many devices it moved. Steps it takes count from the next recount on.
   */
  claimMissingSteps(deploymentId: string): Promise<number>;
  listStates(deploymentId: string): Promise<DeviceStateRecord[]>;
  /** One page of the states, in the order of the devices' UUIDs; `now` gives the state shown for a stored one. */
  readStatesPage(deploymentId: string, page: StoredStatesPage, now: (state: DeviceStateRecord) => DeviceStateRecord): Promise<StatesPageRead>;
  /**
   * How many devices are at each status (their highest), counted by the store over the stored
   * events: with `since`, only the statuses reached since then; with `before`, only those reached
   * before then. Its cost grows with the deployment: the summary reads `StatusCountStore` instead.
   */
  devicesByStatus(deploymentId: string, window?: { since?: Date; before?: Date }): Promise<Map<string, number>>;
  /** The deployment's failures (every `failed` report, and one `rolled_back` per device) with this reason, stored since `since`. */
  countRecentFailures(deploymentId: string, reason: string, since: Date): Promise<number>;
  /** The deployment's failures, as `countRecentFailures` counts them, by reason (stored before `before`, when given). */
  failuresByReason(deploymentId: string, before?: Date): Promise<Map<string, number>>;
  /** Per device, which of these deployments it reported `rolled_back` for (devices with none are absent). */
  rolledBackDevices(deploymentIds: readonly string[]): Promise<Map<string, Set<string>>>;
  /** Forgets the device's statuses and its reports; answers the deployments it had statuses in. */
  deleteDeviceStates(projectId: string, deviceUuid: string): Promise<string[]>;
}

/** Where a snapshot of a deployment's counts stands. */
export interface CountSnapshot {
  version: number;
  /** The snapshot covers the events before this second; deltas from this second on come on top. */
  through: Date;
  /** When the events were last counted afresh (recounted) rather than summed from deltas. */
  recountedAt: Date;
}

/**
 * Each deployment's devices per status and failures per reason, kept as the reports arrive: a
 * snapshot, and insert-only deltas (per replica and second) on top of it. Readers add the deltas
 * since the snapshot; a compaction folds them into the next snapshot, and a recount replaces the
 * sum with a count of the stored events, correcting any drift. New snapshots are inserted under
 * their version, so of two replicas making the same one, one succeeds.
 */
export interface StatusCountStore {
  /** Starts a new deployment's counts at zero. */
  startCounts(deploymentId: string, at: Date): Promise<void>;
  insertDelta(delta: CountDelta): Promise<void>;
  /** The newest snapshot plus the deltas after it; null for a deployment never counted. */
  readCounts(deploymentId: string): Promise<{ counts: StatusCounts; snapshot: CountSnapshot } | null>;
  /** Folds the deltas of the seconds before `cutoff` into a new snapshot; answers the newest snapshot after it. */
  compact(deploymentId: string, cutoff: Date): Promise<CountSnapshot | null>;
  /** Counts the events stored before `cutoff` afresh, as a new snapshot; false when another replica's snapshot came first. */
  recount(deploymentId: string, cutoff: Date, now: Date): Promise<boolean>;
}

/** One lifecycle event a device reported and had accepted, as it sent it. */
export interface DeviceReport {
  id: string;
  projectId: string;
  deploymentId: string;
  deviceUuid: string;
  event: string;
  status: string;
  buildNumber: number | undefined;
  reason: string;
  detailJson: string;
  createdAt: Date;
  /** A deferred report's time to offer again. */
  deferredUntil?: Date;
}

/** The devices of a deployment whose newest deferral is still ahead, and the latest of those times. */
export interface Deferrals {
  devices: number;
  until: Date | null;
}

/**
 * Each device's newest reports (as it arrived: docs/api.md, "Status reports"), for its timeline:
 * the reports the device's events carry (`DeviceStateStore.recordEvent`), the first `offered`
 * report of each deployment, and the repeats that releases before this one stored on their own.
 */
export interface DeviceReportStore {
  /**
   * Stores the device's first report of a status whose event carries none (`offered`, which the
   * check records), or of a `stopped` for one reason (`once`: what a repeat shares with it, the
   * status by default); false, storing nothing, when one is stored already.
   */
  insertFirstReport(report: DeviceReport, once?: string): Promise<boolean>;
  /** The deployment's devices whose newest deferred report is for a time after `now`. */
  deferrals(deploymentId: string, now: Date): Promise<Deferrals>;
  /** The time the device's newest deferral of the deployment put it off until; null if it never deferred it. */
  lastDeferral(deploymentId: string, deviceUuid: string): Promise<Date | null>;
  /** Newest first, at most `limit`, created at or after `since` when given, wherever each is stored. */
  listReports(projectId: string, deviceUuid: string, limit: number, since: Date | undefined): Promise<DeviceReport[]>;
}

/** Authoritative artifact lookups (the artifacts service), for creating deployments. */
export interface ArtifactCatalog {
  getArtifact(projectId: string, artifactId: string, call: OutboundCall): Promise<ArtifactSummary>;
}

/** The project's devices as the registry stores them (the registry service), for previews. */
export interface Fleet {
  /**
   * Pages of the project's devices (or of those whose UUID begins with `idPrefix`), read under the
   * caller's request id and deadline. Each device's group ids are its groups among `groupIds`: the
   * others cannot change a decision over deployments that target only these.
   */
  devices(projectId: string, idPrefix: string, groupIds: readonly string[], call: OutboundCall & { deadline: Date | number }): AsyncIterable<FleetDevice[]>;
}

/** The in-memory read models the check path decides from. */
export interface RolloutViews extends DecisionViews<Deployment> {
  /** Applies a change this replica made, before the NATS echo arrives. */
  deploymentWritten(deployment: Deployment): void;
  artifactSeen(artifact: ArtifactSummary): void;
}

export interface RolloutEvents {
  /**
   * A deployment was created or changed. Resolves once the replicas holding views of it applied
   * it (or a short wait passed) when the change can make a build offerable; at once otherwise.
   */
  deploymentChanged(deployment: Deployment): Promise<void>;
  /**
   * The deployment changed by itself (a guardrail paused it, its plan ramped it): the audit event,
   * whose id is derived from the deployment's version so that a repeat is stored once.
   */
  changedByItself(deployment: Deployment, action: 'deployment.paused' | 'deployment.ramped', details: Record<string, unknown>): void;
  deviceStatusChanged(deploymentId: string, deviceUuid: string, status: DeviceStatusEntry): void;
  /** The device was deleted: every replica forgets its statuses. */
  deviceForgotten(deviceUuid: string): void;
}
