import { failedPrecondition } from '@ota/errors';
import type { artifacts } from '@ota/proto';
import type { ArtifactsPort, AuditLog, Caller, RolloutPort } from './ports';
import { liftRetirement, retireTarget } from './target-retirement';

export interface ArtifactArchivingPorts {
  rollout: RolloutPort<'retireTarget'>;
  artifacts: ArtifactsPort<'setArtifactArchived'>;
  audit: AuditLog;
}

/**
 * Archives or unarchives a build. Archiving is refused (400) while rollout has a draft, active or
 * paused deployment of it: archived builds are never offered, and such a deployment would stall.
 * It is held under concurrent creations by rollout's fence (target-retirement.ts), which an
 * unarchive lifts once the build is back. Only a change is audited.
 */
export async function setArtifactArchived(
  ports: ArtifactArchivingPorts,
  caller: Caller,
  target: { projectId: string; artifactId: string; archived: boolean },
): Promise<artifacts.Artifact> {
  const { projectId, artifactId, archived } = target;
  const { call } = caller;
  const build = { projectId, kind: 'artifact', id: artifactId } as const;
  const archive = () => ports.artifacts.setArtifactArchived({ projectId, artifactId, archived }, call);
  const refusal = (inTheWay: readonly unknown[]) =>
    failedPrecondition(`${inTheWay.length} draft, active or paused deployment(s) use this build; cancel or complete them before archiving it`);
  const { artifact, changed } = archived ? await retireTarget(ports, build, refusal, archive, call) : await archive();
  if (!archived) await liftRetirement(ports, build, call);
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
