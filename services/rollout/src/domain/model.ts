import type { MaintenanceSchedule } from '@ota/decision';
import type { GuardrailTrip, Guardrails } from './guardrails';
import type { OfferCaps } from './offer-caps';
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
  /** When the deployment may offer its build (docs/api.md, "Maintenance windows"); none: at any time. */
  maintenance: MaintenanceSchedule | null;
  /** How fast it may start updates (docs/api.md, "Offer caps"); none: as fast as devices check. */
  caps: OfferCaps | null;
}

export interface GuardrailPause extends GuardrailTrip {
  at: Date;
}
