import type { BuildRequirements, HardwareProfile } from '@ota/manifest';
import type { GuardrailTrip, Guardrails } from './guardrails';
import type { Stage, StageProgress } from './stages';

export type DeploymentState = 'draft' | 'active' | 'paused' | 'completed' | 'cancelled';

export interface Deployment {
  id: string;
  projectId: string;
  artifactId: string;
  buildNumber: number;
  versionLabel: string;
  state: DeploymentState;
  targetGroupIds: string[];
  targetChannelIds: string[];
  rolloutPercentage: number;
  rolloutStrategy: string;
  notes: string;
  failureCount: number;
  createdAt: Date;
  startedAt: Date | null;
  updatedAt: Date;
  /** Rises by one with each transition; a transition claims the next version or fails. */
  version: number;
  guardrails: Guardrails;
  /** The staged plan; empty for a deployment ramped only by hand. */
  stages: Stage[];
  stage: StageProgress;
  /** Why a guardrail paused the deployment; cleared by a person's resume. */
  guardrailPause: GuardrailPause | null;
  /**
   * Set when a person resumes a deployment a guardrail paused: from then on its guardrails judge
   * only what devices reached since, so the figures that person looked at do not pause it again.
   */
  guardrailsJudgedSince: Date | null;
}

export interface GuardrailPause extends GuardrailTrip {
  at: Date;
}

/** What the decision needs of an artifact (from the artifacts read model). */
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
}

/** The checking device, as the registry knows it and as it reported itself in this request. */
export interface DecisionDevice extends Omit<HardwareProfile, 'boardId' | 'hardwareRevision'> {
  id: string;
  channelId: string;
  groupIds: string[];
  /** Undefined when the request left the field out. */
  boardId: string | undefined;
  hardwareRevision: string | undefined;
  currentBuildNumber: number;
}
