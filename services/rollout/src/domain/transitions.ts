import { failedPrecondition, invalidArgument } from '@ota/errors';
import type { Deployment, DeploymentState } from './model';

export type TransitionAction = 'start' | 'pause' | 'resume' | 'ramp' | 'complete' | 'cancel';

// decisions.md section 4: the one table of which action moves which state where.
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
}

/** Validates a transition and returns the deployment's new fields; every refusal is a 400. */
export function applyTransition(deployment: Deployment, request: TransitionRequest, now: Date): TransitionChange {
  const rule = TRANSITIONS[request.action as TransitionAction];
  if (!rule) throw invalidArgument(`unknown action "${request.action}"; use one of ${Object.keys(TRANSITIONS).join(', ')}`);
  if (!rule.from.includes(deployment.state)) {
    throw invalidArgument(`cannot ${request.action} a deployment that is ${deployment.state}`);
  }
  const change: TransitionChange = {
    state: rule.to === 'unchanged' ? deployment.state : rule.to,
    rolloutPercentage: deployment.rolloutPercentage,
    startedAt: deployment.startedAt,
  };
  if (request.action === 'ramp') {
    if (request.rolloutPercentage === undefined) throw invalidArgument('ramp needs rollout_percentage');
    change.rolloutPercentage = validPercentage(request.rolloutPercentage);
  }
  if (request.action === 'start' || request.action === 'resume') {
    requireConfirmAll(deployment, request);
    if (request.action === 'start') change.startedAt = now;
  }
  return change;
}

export function validPercentage(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 100) throw invalidArgument('rollout_percentage must be an integer from 0 to 100');
  return value;
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
