import type { CheckStatus as VocabularyCheckStatus } from '@ota/vocabulary';
import { admittedByRollout } from './cohort';
import { bootRefusal, isCompatible, requireDeclaredDimensions } from './compatibility';
import { windowStateAt } from './maintenance-windows';
import type { ArtifactSummary, DecisionDeployment, DecisionDevice } from './model';
import { targetsDevice } from './targeting';

/** The check statuses the decision answers; registry answers the others before it decides. */
export type CheckStatus = Extract<
  VocabularyCheckStatus,
  'offered' | 'up_to_date' | 'no_active_deployment' | 'not_in_rollout' | 'no_compatible_build' | 'chip_revision_unsupported' | 'secure_version_too_low'
>;

export type Decision<D extends DecisionDeployment = DecisionDeployment> =
  | { status: 'offered'; message: string; deployment: D; artifact: ArtifactSummary }
  | { status: Exclude<CheckStatus, 'offered'>; message: string; windowOpensAt?: Date; deferredUntil?: Date };

export interface DecisionInput<D extends DecisionDeployment> {
  device: DecisionDevice;
  /** The project's active deployments. */
  activeDeployments: readonly D[];
  artifactOf: (artifactId: string) => ArtifactSummary | undefined;
  /** Deployments this device reported `rolled_back` for: never offered again. */
  rolledBack: ReadonlySet<string>;
  /** When the device checks: an offer waits for its deployment's maintenance window. None: windows are not looked at (a preview). */
  at?: Date;
}

/** docs/api.md, "The check decision", steps 6 to 11. */
export function decideOffer<D extends DecisionDeployment>({ device, activeDeployments, artifactOf, rolledBack, at }: DecisionInput<D>): Decision<D> {
  const targeting = activeDeployments.filter((deployment) => targetsDevice(deployment, device));
  if (targeting.length === 0) return { status: 'no_active_deployment', message: 'no active deployment targets this device' };

  const compatible: Array<{ deployment: D; artifact: ArtifactSummary }> = [];
  // Builds that fit the hardware but that the device's bootloader would refuse: never offered.
  let refusal: ReturnType<typeof bootRefusal>;
  for (const deployment of targeting) {
    const artifact = artifactOf(deployment.artifactId);
    if (!artifact) continue;
    requireDeclaredDimensions(artifact, device);
    if (!isCompatible(artifact, device)) continue;
    const refused = bootRefusal(artifact, device);
    if (refused) refusal ??= refused;
    else compatible.push({ deployment, artifact });
  }
  if (compatible.length === 0 && refusal) return { status: refusal, message: BOOT_REFUSAL_MESSAGES[refusal] };
  if (compatible.length === 0) {
    return { status: 'no_compatible_build', message: 'active deployments target this device, but none of their builds fits its hardware' };
  }

  const admitted = compatible.filter(
    ({ deployment }) => !rolledBack.has(deployment.id) && admittedByRollout(deployment.id, device.id, deployment.rolloutPercentage),
  );
  if (admitted.length === 0) {
    const highest = Math.max(...compatible.map(({ artifact }) => artifact.buildNumber));
    if (device.currentBuildNumber >= highest) return { status: 'up_to_date', message: 'the device runs the highest build assigned to it' };
    const rolledBackOnly = compatible.every(({ deployment }) => rolledBack.has(deployment.id));
    return rolledBackOnly
      ? { status: 'not_in_rollout', message: 'the device rolled back this deployment; it is not offered again' }
      : { status: 'not_in_rollout', message: "the device's cohort is above the current rollout percentage" };
  }

  const best = admitted.reduce((a, b) => {
    if (a.artifact.buildNumber !== b.artifact.buildNumber) return a.artifact.buildNumber > b.artifact.buildNumber ? a : b;
    return startedAt(a.deployment) >= startedAt(b.deployment) ? a : b;
  });
  if (best.artifact.buildNumber <= device.currentBuildNumber) {
    return { status: 'up_to_date', message: 'the device runs the highest build assigned to it' };
  }
  // Outside its deployment's windows the offer waits: the device is in the rollout, not yet.
  if (at && best.deployment.maintenance) {
    const window = windowStateAt(best.deployment.maintenance, at, device.utcOffsetMinutes);
    if (!window.open) {
      return { status: 'not_in_rollout', message: `the deployment offers its build in its maintenance windows; the next opens at ${window.opensAt.toISOString()}`, windowOpensAt: window.opensAt };
    }
  }
  // A device that put this offer off is not offered it before the time it gave.
  const deferral = device.deferral;
  if (at && deferral && deferral.deploymentId === best.deployment.id && at < deferral.until) {
    return { status: 'not_in_rollout', message: `the device deferred this update until ${deferral.until.toISOString()}`, deferredUntil: deferral.until };
  }
  return { status: 'offered', message: `build ${best.artifact.buildNumber} is offered`, ...best };
}

const BOOT_REFUSAL_MESSAGES = {
  chip_revision_unsupported: "the builds that fit this device's hardware are built for other chip revisions: its bootloader would refuse them",
  secure_version_too_low: "the builds that fit this device's hardware have a secure_version below its eFuse anti-rollback version: its bootloader would refuse them",
} as const;

function startedAt(deployment: DecisionDeployment): number {
  return (deployment.startedAt ?? deployment.createdAt).getTime();
}
