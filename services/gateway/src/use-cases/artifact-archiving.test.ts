import { isDomainError } from '@ota/errors';
import { caller, recordingPorts } from '../../test/recording-ports';
import { setArtifactArchived } from './artifact-archiving';

const target = { projectId: 'p1', artifactId: 'a1' };
const archivedAnswer = (changed: boolean) => () => ({ artifact: { id: 'a1', buildNumber: 7 }, changed });

test('archiving a build that a draft, active or paused deployment uses is refused before anything changes', async () => {
  const { ports, called, requestOf } = recordingPorts({ 'rollout.retireTarget': () => ({ inTheWay: [{ id: 'd1' }] }) });
  const refusal = await setArtifactArchived(ports, caller, { ...target, archived: true }).catch((error: unknown) => error);
  expect(isDomainError(refusal) && refusal.kind).toBe('FailedPrecondition');
  expect(isDomainError(refusal) && refusal.message).toMatch(/^1 draft, active or paused deployment/);
  expect(called()).toEqual(['rollout.retireTarget']);
  expect(requestOf('rollout.retireTarget')).toEqual({ projectId: 'p1', kind: 'artifact', id: 'a1', retire: true });
});

test('an archive is fenced first; a failed archive lifts the fence again', async () => {
  const archived = recordingPorts({ 'rollout.retireTarget': () => ({ inTheWay: [] }), 'artifacts.setArtifactArchived': archivedAnswer(true) });
  await setArtifactArchived(archived.ports, caller, { ...target, archived: true });
  expect(archived.called()).toEqual(['rollout.retireTarget', 'artifacts.setArtifactArchived', 'audit.record']);

  const failing = recordingPorts({
    'rollout.retireTarget': () => ({ inTheWay: [] }),
    'artifacts.setArtifactArchived': () => {
      throw new Error('artifacts is away');
    },
  });
  await expect(setArtifactArchived(failing.ports, caller, { ...target, archived: true })).rejects.toThrow('artifacts is away');
  expect(failing.called()).toEqual(['rollout.retireTarget', 'artifacts.setArtifactArchived', 'rollout.retireTarget']);
  expect(failing.calls[2]!.args[0]).toEqual({ projectId: 'p1', kind: 'artifact', id: 'a1', retire: false });
});

test('unarchiving lifts the fence once the build is back; only a change is audited', async () => {
  const changed = recordingPorts({ 'artifacts.setArtifactArchived': archivedAnswer(true), 'rollout.retireTarget': () => ({ inTheWay: [] }) });
  await setArtifactArchived(changed.ports, caller, { ...target, archived: false });
  expect(changed.called()).toEqual(['artifacts.setArtifactArchived', 'rollout.retireTarget', 'audit.record']);
  expect(changed.calls[2]!.args[1]).toMatchObject({ action: 'artifact.unarchived', details: { build_number: 7 } });

  const unchanged = recordingPorts({ 'rollout.retireTarget': () => ({ inTheWay: [] }), 'artifacts.setArtifactArchived': archivedAnswer(false) });
  await setArtifactArchived(unchanged.ports, caller, { ...target, archived: true });
  expect(unchanged.called()).toEqual(['rollout.retireTarget', 'artifacts.setArtifactArchived']);
});
