import type { DeviceStatusEntry } from './device-status-cache';
import type { ArtifactSummary, Deployment, DeploymentState } from './model';
import type { FleetDevice } from './preview';

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
}

export interface DeviceStateRecord {
  deviceId: string;
  status: string;
  reason: string;
  updatedAt: Date;
}

export interface DeviceEvent {
  deploymentId: string;
  projectId: string;
  deviceId: string;
  status: string;
  rank: number;
  reason: string;
  at: Date;
}

export interface DeviceStateStore {
  /**
   * Stores that the device reached `status` in the deployment. Each status is stored once per
   * device and deployment, except `failed`, of which every report is kept (each one counts). The
   * device's status is the highest-ranked one stored, so it can never move backwards.
   */
  recordEvent(event: DeviceEvent): Promise<void>;
  /** The device's highest stored status in the deployment, or null when it has none. */
  highestStatus(deploymentId: string, deviceId: string): Promise<DeviceStatusEntry | null>;
  /** Failures per deployment: every `failed`, and one `rolled_back` per device. */
  failureCounts(deploymentIds: readonly string[]): Promise<Map<string, number>>;
  listStates(deploymentId: string): Promise<DeviceStateRecord[]>;
  /**
   * How many devices are at each status (their highest), computed by the store. With `since`, only
   * the statuses reached since then count.
   */
  devicesByStatus(deploymentId: string, since?: Date): Promise<Map<string, number>>;
  /** The failures that `failureCounts` counts with this reason, stored since `since`. */
  countRecentFailures(deploymentId: string, reason: string, since: Date): Promise<number>;
  /** The failures that `failureCounts` counts, by reason. */
  failuresByReason(deploymentId: string): Promise<Map<string, number>>;
  /** Per device, which of these deployments it reported `rolled_back` for (devices with none are absent). */
  rolledBackDevices(deploymentIds: readonly string[]): Promise<Map<string, Set<string>>>;
  /** Forgets the device's statuses and its reports. */
  deleteDeviceStates(projectId: string, deviceId: string): Promise<void>;
}

/** One lifecycle event a device reported and had accepted, as it sent it. */
export interface DeviceReport {
  id: string;
  projectId: string;
  deploymentId: string;
  deviceId: string;
  event: string;
  status: string;
  buildNumber: number | undefined;
  reason: string;
  detailJson: string;
  createdAt: Date;
}

/** Each device's newest reports (spec 6.1 as it arrived), for its timeline. */
export interface DeviceReportStore {
  insertReport(report: DeviceReport): Promise<void>;
  /** Newest first, at most `limit`, created at or after `since` when given. */
  listReports(projectId: string, deviceId: string, limit: number, since: Date | undefined): Promise<DeviceReport[]>;
  /** Deletes all but the device's newest `keep` reports. */
  trimReports(deviceId: string, keep: number): Promise<void>;
}

/** Authoritative artifact lookups (the artifacts service), for creating deployments. */
export interface ArtifactCatalog {
  getArtifact(projectId: string, artifactId: string, requestId: string): Promise<ArtifactSummary>;
}

/** The project's devices as the registry stores them (the registry service), for previews. */
export interface Fleet {
  /** Pages of the project's devices, read under the caller's request id and deadline. */
  devices(projectId: string, call: { requestId: string; deadline: Date | number }): AsyncIterable<FleetDevice[]>;
}

/** The in-memory read models the check path decides from. */
export interface RolloutViews {
  activeDeployments(projectId: string): readonly Deployment[];
  artifact(artifactId: string): ArtifactSummary | undefined;
  /** Applies a change this replica made, before the NATS echo arrives. */
  deploymentWritten(deployment: Deployment): void;
  artifactSeen(artifact: ArtifactSummary): void;
}

export interface RolloutEvents {
  deploymentChanged(deployment: Deployment): void;
  /**
   * The deployment changed by itself (a guardrail paused it, its plan ramped it): the audit event,
   * whose id is derived from the deployment's version so that a repeat is stored once.
   */
  changedByItself(deployment: Deployment, action: 'deployment.paused' | 'deployment.ramped', details: Record<string, unknown>): void;
  deviceStatusChanged(deploymentId: string, deviceId: string, status: DeviceStatusEntry): void;
  /** The device was deleted: every replica forgets its statuses. */
  deviceForgotten(deviceId: string): void;
}
