import { invalidArgument } from '@ota/errors';
import type { rollout } from '@ota/proto';
import type { OutboundCall } from '@ota/logging';
import { requireRole, roleAllows, type Role } from '../auth/roles';
import type { AuditLog, Caller, RegistryPort, RolloutPort } from './ports';
import { holdsJson, requireHoldsOverridden } from './build-holds';
import { preparePatches, type PatchPreparationPorts } from './patch-preparation';

export interface DeploymentPorts extends PatchPreparationPorts {
  registry: RegistryPort<'listGroups' | 'listChannels' | 'countDevices' | 'countCurrentImages'>;
  rollout: RolloutPort<'createDeployment' | 'transitionDeployment' | 'getDeployment' | 'getDeploymentSummary' | 'listBuildHolds'>;
  audit: AuditLog;
}

/** A new deployment as rollout takes it, less the project (the caller's) and `start` (always a draft). */
export type NewDeployment = Omit<rollout.CreateDeploymentRequest, 'projectId' | 'start'>;

/**
 * Creates a draft deployment. Its targets are registry's groups and channels, so registry is
 * asked first: an id that is not a group or channel of the project is 400 and nothing is stored.
 */
export async function createDeployment(ports: DeploymentPorts, caller: Caller, projectId: string, draft: NewDeployment): Promise<rollout.Deployment> {
  const { call } = caller;
  const { targetGroupIds, targetChannelIds } = draft;
  const [{ groups }, { channels }] = await Promise.all([
    targetGroupIds.length > 0 ? ports.registry.listGroups({ projectId }, call) : { groups: [] },
    targetChannelIds.length > 0 ? ports.registry.listChannels({ projectId }, call) : { channels: [] },
  ]);
  const unknownGroups = targetGroupIds.filter((id) => !groups.some((group) => group.id === id));
  const unknownChannels = targetChannelIds.filter((id) => !channels.some((channel) => channel.id === id));
  if (unknownGroups.length > 0) throw invalidArgument(`target_group_ids names no group of this project: ${unknownGroups.join(', ')}`);
  if (unknownChannels.length > 0) throw invalidArgument(`target_channel_ids names no channel of this project: ${unknownChannels.join(', ')}`);
  const { deployment } = await ports.rollout.createDeployment({ ...draft, projectId, start: false }, call);
  return deployment!;
}

// The audit action each transition writes (docs/api.md, "Audit event").
const AUDIT_ACTION: Record<string, string> = {
  start: 'deployment.started',
  pause: 'deployment.paused',
  resume: 'deployment.resumed',
  ramp: 'deployment.ramped',
  complete: 'deployment.completed',
  cancel: 'deployment.cancelled',
};

export type Transition = Pick<rollout.TransitionDeploymentRequest, 'deploymentId' | 'action' | 'rolloutPercentage' | 'confirmAll' | 'expectedVersion'> & {
  /** The caller goes around the holds on the build, knowing them (docs/api.md, "Holds on a build"). */
  overrideHolds?: boolean;
};

export interface TransitionResult {
  deployment: rollout.Deployment;
  /** The holds on the build this transition went around; empty for most. */
  overriddenHolds: rollout.BuildHold[];
}

/**
 * Moves a deployment through its states. Rollout decides; a start or resume of a deployment
 * without targets needs `confirm_all` when the project has two or more devices, so registry's
 * count goes with it, stopped at two whatever the size of the fleet.
 */
export async function transitionDeployment(ports: DeploymentPorts, caller: Caller & { role: Role }, projectId: string, requested: Transition): Promise<TransitionResult> {
  const { call } = caller;
  const { overrideHolds, ...judged } = requested;
  const { transition, overriddenHolds } = await withRoleRules(ports, caller, projectId, judged, overrideHolds ?? false);
  const needsCount = transition.action === 'start' || transition.action === 'resume';
  const projectDeviceCount = needsCount ? (await ports.registry.countDevices({ projectId, groupIds: [], channelIds: [], atMost: 2, maxAgeMs: 0 }, call)).count : 0;
  const { deployment } = await ports.rollout.transitionDeployment({ ...transition, projectId, projectDeviceCount }, call);
  await ports.audit.record(caller.principal, {
    projectId,
    action: AUDIT_ACTION[transition.action]!,
    targetType: 'deployment',
    targetId: transition.deploymentId,
    details: { state: deployment!.state, rollout_percentage: deployment!.rolloutPercentage, ...(overriddenHolds.length > 0 ? { overridden_holds: holdsJson(overriddenHolds) } : {}) },
    // Stamped when the transition took effect, not when its answer came back: racing transitions
    // are audited in the order they were applied.
    at: deployment!.updatedAt,
  });
  // The first summary of a target set waits for a count of the fleet, which on a large FerretDB
  // fleet takes longer than a request may: a started deployment has it counted now, behind the answer.
  if (needsCount) void targetedDevices(ports, projectId, deployment!, call).catch(() => undefined);
  // The build's delta patches from the images devices run, asked for behind the answer: a start
  // never waits for them, nor fails for them.
  if (transition.action === 'start') void preparePatches(ports, { projectId, artifactId: deployment!.artifactId }, call).catch(() => undefined);
  return { deployment: deployment!, overriddenHolds };
}

/**
 * The roles a transition needs beyond the operator's (docs/api.md, "Roles"). Anyone who may change
 * a deployment may pause it. Resuming one a guardrail paused needs an approver, and so does a ramp
 * upwards while the next stage of its plan needs approval: such a ramp by an operator is judged on
 * the deployment as read here, and applies only to that version of it, so that a stage reached in
 * between is a 409 rather than a gate passed unseen. A start, resume or upward ramp of a build
 * that another deployment of it holds back goes around that hold only by an approver who names
 * it (`override_holds`); the holds gone around are answered and audited.
 */
async function withRoleRules(
  ports: DeploymentPorts,
  caller: Caller & { role: Role },
  projectId: string,
  transition: Transition,
  overrideHolds: boolean,
): Promise<{ transition: Transition; overriddenHolds: rollout.BuildHold[] }> {
  const widens = transition.action === 'start' || transition.action === 'resume' || transition.action === 'ramp';
  if (!widens) return { transition, overriddenHolds: [] };
  const { deployment } = await ports.rollout.getDeployment({ projectId, deploymentId: transition.deploymentId }, caller.call);
  const current = deployment!;
  const upwards = transition.action !== 'ramp' || (transition.rolloutPercentage ?? 0) > current.rolloutPercentage;
  if (transition.action === 'resume' && current.guardrailPause) {
    requireRole(caller.role, 'approver', `Resuming a deployment the ${current.guardrailPause.guardrail} guardrail paused`);
  }
  const gated = transition.action === 'ramp' && upwards && current.nextStageNeedsApproval;
  if (gated) requireRole(caller.role, 'approver', 'Ramping past a stage that needs approval');
  const overriddenHolds = upwards ? await heldBack(ports, caller, projectId, current, transition.action, overrideHolds) : [];
  const pinned = transition.action === 'ramp' && !roleAllows(caller.role, 'approver');
  return { transition: pinned ? { ...transition, expectedVersion: transition.expectedVersion ?? current.version } : transition, overriddenHolds };
}

const VERB: Record<string, string> = { start: 'Starting', resume: 'Resuming', ramp: 'Ramping up' };

/** The holds on the deployment's build, when the caller may and does go around them; throws otherwise. */
async function heldBack(ports: DeploymentPorts, caller: Caller & { role: Role }, projectId: string, deployment: rollout.Deployment, action: string, overrideHolds: boolean): Promise<rollout.BuildHold[]> {
  const { holds } = await ports.rollout.listBuildHolds({ projectId, artifactId: deployment.artifactId, exceptDeploymentId: deployment.id }, caller.call);
  return requireHoldsOverridden(caller, `${VERB[action]} a deployment`, deployment.buildNumber, holds, overrideHolds);
}

function targetedDevices(ports: DeploymentPorts, projectId: string, deployment: rollout.Deployment, call: OutboundCall) {
  return ports.registry.countDevices(
    { projectId, groupIds: deployment.targetGroupIds, channelIds: deployment.targetChannelIds, atMost: 0, maxAgeMs: TARGETED_COUNT_MAX_AGE_MS },
    call,
  );
}

/**
 * How old the summary's `targeted_devices` may be: counting a large fleet on every poll of a
 * console is what the summary must not do (docs/api.md, "Rollout progress").
 */
export const TARGETED_COUNT_MAX_AGE_MS = 120_000;

export interface DeploymentProgress {
  deployment: rollout.Deployment;
  summary: rollout.GetDeploymentSummaryResponse;
  /** How many devices the deployment's targets reach now, in any state (registry's count). */
  targetedDevices: number;
  /** The count is extrapolated from a sample of a large project. */
  targetedDevicesEstimated: boolean;
}

/** A deployment's progress: rollout counts the states it recorded, registry the devices its targets reach. */
export async function deploymentProgress(ports: DeploymentPorts, caller: Caller, projectId: string, deploymentId: string): Promise<DeploymentProgress> {
  const { call } = caller;
  const summary = await ports.rollout.getDeploymentSummary({ projectId, deploymentId }, call);
  // A rollout replica of the release before sends the summary without its deployment.
  const deployment = summary.deployment ?? (await ports.rollout.getDeployment({ projectId, deploymentId }, call)).deployment!;
  const targeted = await targetedDevices(ports, projectId, deployment, call);
  return { deployment, summary, targetedDevices: targeted.count, targetedDevicesEstimated: targeted.estimated };
}
