import type { ArtifactSummary, Deployment, DeploymentState } from './model';

export interface DeploymentStore {
  insertDeployment(deployment: Deployment): Promise<void>;
  findDeployment(id: string): Promise<Deployment | null>;
  listDeployments(projectId: string): Promise<Deployment[]>;
  /** Every active deployment of every project, for the in-memory view. */
  listActiveDeployments(): Promise<Deployment[]>;
  /** Compare-and-set: applies `set` only while the deployment is still in `expectedState`. */
  updateDeployment(id: string, expectedState: DeploymentState, set: Partial<Deployment>): Promise<Deployment | null>;
  incrementFailureCount(id: string, at: Date): Promise<void>;
  countDeployments(projectId: string, states: readonly DeploymentState[], artifactId?: string): Promise<number>;
}

export interface DeviceStateRecord {
  deviceId: string;
  status: string;
  reason: string;
  updatedAt: Date;
}

export interface DeviceStateStore {
  /**
   * Moves the device's status for a deployment to `status` if that is further along (higher rank)
   * than what is stored, creating the record when there is none. Returns the status now stored
   * and whether this call moved it.
   */
  advance(input: { deploymentId: string; projectId: string; deviceId: string; status: string; rank: number; reason: string; at: Date }): Promise<{ advanced: boolean; status: string }>;
  /** Of `deploymentIds`, those the device reported `rolled_back` for. */
  rolledBack(deviceId: string, deploymentIds: readonly string[]): Promise<Set<string>>;
  listStates(deploymentId: string): Promise<DeviceStateRecord[]>;
  deleteDeviceStates(projectId: string, deviceId: string): Promise<void>;
}

/** Authoritative artifact lookups (the artifacts service), for creating deployments. */
export interface ArtifactCatalog {
  getArtifact(projectId: string, artifactId: string, requestId: string): Promise<ArtifactSummary>;
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
}
