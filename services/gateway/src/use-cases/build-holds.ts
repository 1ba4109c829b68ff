import { invalidArgument } from '@ota/errors';
import type { rollout } from '@ota/proto';
import { requireRole, type Role } from '../auth/roles';
import type { ArtifactsPort, Caller, RolloutPort } from './ports';

export interface HoldPorts {
  rollout: RolloutPort<'listBuildHolds'>;
  artifacts: ArtifactsPort<'listArtifacts'>;
}

/**
 * Going around the holds on a build (docs/api.md, "Holds on a build") is an approver's, who says
 * so (`override_holds`): below the role it is 403, without the word 400, each naming the holds.
 * Answers the holds gone around, for the answer and the audit.
 */
export function requireHoldsOverridden(caller: { role: Role }, what: string, buildNumber: number, holds: readonly rollout.BuildHold[], overrideHolds: boolean): rollout.BuildHold[] {
  if (holds.length === 0) return [];
  const why = holds.map((hold) => hold.detail).join('; ');
  requireRole(caller.role, 'approver', `${what} of build ${buildNumber} while it is held (${why})`);
  if (!overrideHolds) throw invalidArgument(`build ${buildNumber} is held: ${why}. To go around it, send override_holds: true`);
  return [...holds];
}

/**
 * The holds on the builds of the project whose bytes are these (SHA-256 hex): a release of the
 * same bytes again is the same build on more devices, whatever its new build number.
 */
export async function holdsOnBytes(ports: HoldPorts, caller: Caller, projectId: string, checksumSha256: string): Promise<{ buildNumber: number; holds: rollout.BuildHold[] }> {
  const { artifacts } = await ports.artifacts.listArtifacts({ projectId }, caller.call);
  const same = artifacts.filter((artifact) => artifact.checksumSha256 === checksumSha256);
  const holds = (await Promise.all(same.map((artifact) => ports.rollout.listBuildHolds({ projectId, artifactId: artifact.id, exceptDeploymentId: '' }, caller.call)))).flatMap((answer) => answer.holds);
  return { buildNumber: same[0]?.buildNumber ?? 0, holds };
}

/** How the answer and the audit name the holds gone around. */
export function holdsJson(holds: readonly rollout.BuildHold[]) {
  return holds.map((hold) => ({ deployment_id: hold.deploymentId, kind: hold.kind, detail: hold.detail }));
}
