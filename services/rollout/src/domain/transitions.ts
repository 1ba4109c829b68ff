import { conflict, failedPrecondition, invalidArgument } from '@ota/errors';
import type { GuardrailTrip } from './guardrails';
import type { Deployment, DeploymentState, GuardrailPause } from './model';
import { stageOfPercentage, type StageProgress } from './stages';

export type TransitionAction = 'start' | 'pause' | 'resume' | 'ramp' | 'complete' | 'cancel';

// docs/api.md, "Deployment states": the one table of which action moves which state where.
const TRANSITIONS: Record<TransitionAction, { from: readonly DeploymentState[]; to: DeploymentState | 'unchanged' }> = {
  start: { from: ['draft'], to: 'active' },
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  ramp: { from: ['active', 'paused'], to: 'unchanged' },
  complete: { from: ['active', 'paused'], to: 'completed' },
  cancel: { from: ['draft', 'active', 'paused'], to: 'cancelled' },
};

export interface TransitionRequest {
  action: string;
  rolloutPercentage?: number;
  confirmAll: boolean;
  projectDeviceCount: number;
}

export interface TransitionChange {
  state: DeploymentState;
  rolloutPercentage: number;
  startedAt: Date | null;
  stage: StageProgress;
  guardrailPause: GuardrailPause | null;
  guardrailsJudgedSince: Date | null;
}

/** Validates a transition and returns the deployment's new fields; every refusal is a 400. */
export function applyTransition(deployment: Deployment, request: TransitionRequest, now: Date): TransitionChange {
  const rule = TRANSITIONS[request.action as TransitionAction];
  if (!rule) throw invalidArgument(`unknown action "${request.action}"; use one of ${Object.keys(TRANSITIONS).join(', ')}`);
  if (!rule.from.includes(deployment.state)) {
    throw invalidArgument(`cannot ${request.action} a deployment that is ${deployment.state}`);
  }
  const change: TransitionChange = { ...unchanged(deployment), state: rule.to === 'unchanged' ? deployment.state : rule.to };
  if (request.action === 'ramp') {
    if (request.rolloutPercentage === undefined) throw invalidArgument('ramp needs rollout_percentage');
    change.rolloutPercentage = validPercentage(request.rolloutPercentage);
    // A person's ramp moves a staged plan to the stage that percentage reaches; its wait starts again.
    if (deployment.stages.length > 0) change.stage = { index: stageOfPercentage(deployment.stages, change.rolloutPercentage), enteredAt: now };
  }
  if (request.action === 'resume') requireResumeConfirmed(deployment, request);
  if (request.action === 'start' || request.action === 'resume') {
    requireConfirmAll(deployment, request);
    // The current stage's wait starts on the start and again on a resume: time spent paused proves nothing.
    change.stage = { index: deployment.stage.index, enteredAt: now };
    change.guardrailPause = null;
    if (deployment.guardrailPause) change.guardrailsJudgedSince = now;
    if (request.action === 'start') {
      change.startedAt = now;
      if (deployment.stages.length > 0) change.rolloutPercentage = deployment.stages[0]!.percentage;
    }
  }
  return change;
}

/** A guardrail pauses an active deployment; null when it is no longer active. */
export function guardrailPauseOf(deployment: Deployment, trip: GuardrailTrip, now: Date): TransitionChange | null {
  if (deployment.state !== 'active') return null;
  return { ...unchanged(deployment), state: 'paused', guardrailPause: { ...trip, at: now } };
}

/** The plan ramps an active deployment into stage `index`; null when it is no longer active. */
export function stageAdvanceOf(deployment: Deployment, index: number, now: Date): TransitionChange | null {
  const stage = deployment.stages[index];
  if (deployment.state !== 'active' || !stage || index <= deployment.stage.index) return null;
  // Monotone: a person may have ramped past the plan's percentage meanwhile.
  return { ...unchanged(deployment), rolloutPercentage: Math.max(stage.percentage, deployment.rolloutPercentage), stage: { index, enteredAt: now } };
}

function unchanged(deployment: Deployment): TransitionChange {
  return {
    state: deployment.state,
    rolloutPercentage: deployment.rolloutPercentage,
    startedAt: deployment.startedAt,
    stage: deployment.stage,
    guardrailPause: deployment.guardrailPause,
    guardrailsJudgedSince: deployment.guardrailsJudgedSince,
  };
}

export function validPercentage(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 100) throw invalidArgument('rollout_percentage must be an integer from 0 to 100');
  return value;
}

/**
 * A resume states what it resumes to: a `rollout_percentage` sent with it must be the deployment's
 * own (409 otherwise), and one a guardrail paused needs it, because a ramp while paused moves
 * nothing and is easily missed by the person who resumes.
 */
function requireResumeConfirmed(deployment: Deployment, request: TransitionRequest): void {
  const at = deployment.rolloutPercentage;
  if (request.rolloutPercentage !== undefined && request.rolloutPercentage !== at) {
    throw conflict(`it would resume at ${at}%, not ${request.rolloutPercentage}%: ramp it to ${request.rolloutPercentage}% first, or confirm ${at}%`);
  }
  if (request.rolloutPercentage === undefined && deployment.guardrailPause) {
    throw invalidArgument(
      `the ${deployment.guardrailPause.guardrail} guardrail paused this deployment; it resumes at ${at}% of its targets: send rollout_percentage: ${at} to confirm what it resumes to`,
    );
  }
}

/** A deployment that names no groups and no channels reaches the whole fleet: make that explicit. */
function requireConfirmAll(deployment: Deployment, request: TransitionRequest): void {
  if (deployment.targetGroupIds.length > 0 || deployment.targetChannelIds.length > 0) return;
  if (request.projectDeviceCount === 0) {
    throw failedPrecondition('the project has no devices: a deployment without targets cannot start');
  }
  if (request.projectDeviceCount >= 2 && !request.confirmAll) {
    throw invalidArgument('this deployment targets every device of the project: send confirm_all true');
  }
}
