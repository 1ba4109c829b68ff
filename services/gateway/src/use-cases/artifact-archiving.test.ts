import { isDomainError } from '@ota/errors';
import { caller, recordingPorts } from '../../test/recording-ports';
import { setArtifactArchived } from './artifact-archiving';

const target = { projectId: 'p1', artifactId: 'a1' };
const archivedAnswer = (changed: boolean) => () => ({ artifact: { id: 'a1', buildNumber: 7 }, changed });

test('archiving a build that a draft, active or paused deployment uses is refused before anything changes', async () => {
  const { ports, called, requestOf } = recordingPorts({ 'rollout.countDeployments': () => ({ count: 1 }) });
  const refusal = await setArtifactArchived(ports, caller, { ...target, archived: true }).catch((error: unknown) => error);
  expect(isDomainError(refusal) && refusal.kind).toBe('FailedPrecondition');
  expect(called()).toEqual(['rollout.countDeployments']);
  expect(requestOf('rollout.countDeployments')).toEqual({ projectId: 'p1', states: ['draft', 'active', 'paused'], artifactId: 'a1' });
});

test('unarchiving asks rollout nothing; only a change is audited', async () => {
  const changed = recordingPorts({ 'artifacts.setArtifactArchived': archivedAnswer(true) });
  await setArtifactArchived(changed.ports, caller, { ...target, archived: false });
  expect(changed.called()).toEqual(['artifacts.setArtifactArchived', 'audit.record']);
  expect(changed.calls[1]!.args[1]).toMatchObject({ action: 'artifact.unarchived', details: { build_number: 7 } });

  const unchanged = recordingPorts({ 'rollout.countDeployments': () => ({ count: 0 }), 'artifacts.setArtifactArchived': archivedAnswer(false) });
  await setArtifactArchived(unchanged.ports, caller, { ...target, archived: true });
  expect(unchanged.called()).toEqual(['rollout.countDeployments', 'artifacts.setArtifactArchived']);
});
