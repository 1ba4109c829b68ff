import { failedPrecondition } from '@ota/errors';
import type { artifacts } from '@ota/proto';
import type { ArtifactsPort, AuditLog, Caller, RolloutPort } from './ports';

export interface ArtifactArchivingPorts {
  rollout: RolloutPort<'countDeployments'>;
  artifacts: ArtifactsPort<'setArtifactArchived'>;
  audit: AuditLog;
}

/**
 * Archives or unarchives a build. Archiving is refused (400) while rollout has a draft, active or
 * paused deployment of it: archived builds are never offered, and such a deployment would stall.
 * Only a change is audited.
 */
export async function setArtifactArchived(
  ports: ArtifactArchivingPorts,
  caller: Caller,
  target: { projectId: string; artifactId: string; archived: boolean },
): Promise<artifacts.Artifact> {
  const { projectId, artifactId, archived } = target;
  const options = caller.trace;
  if (archived) {
    const { count } = await ports.rollout.countDeployments({ projectId, states: ['draft', 'active', 'paused'], artifactId }, options);
    if (count > 0) throw failedPrecondition(`${count} draft, active or paused deployment(s) use this build; cancel or complete them before archiving it`);
  }
  const { artifact, changed } = await ports.artifacts.setArtifactArchived({ projectId, artifactId, archived }, options);
  if (changed) {
    await ports.audit.record(caller.principal, {
      projectId,
      action: archived ? 'artifact.archived' : 'artifact.unarchived',
      targetType: 'artifact',
      targetId: artifactId,
      details: { build_number: artifact!.buildNumber },
    });
  }
  return artifact!;
}
