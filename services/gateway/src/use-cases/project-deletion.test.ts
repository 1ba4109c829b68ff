import { isDomainError } from '@ota/errors';
import type { registry } from '@ota/proto';
import { caller, recordingPorts } from '../../test/recording-ports';
import { deleteProject } from './project-deletion';

const project = { id: 'p1', ownerId: 'user-1' } as registry.Project;

test('a project with an active or paused deployment is refused (409) before anything is deleted', async () => {
  const { ports, called, requestOf } = recordingPorts({ 'rollout.countDeployments': () => ({ count: 2 }) });
  const refusal = await deleteProject(ports, caller, project).catch((error: unknown) => error);
  // A conflict with the resource's state: Aborted, answered 409.
  expect(isDomainError(refusal) && refusal.kind).toBe('Aborted');
  expect((refusal as Error).message).toContain('2 active or paused deployment(s)');
  expect(called()).toEqual(['rollout.countDeployments']);
  expect(requestOf('rollout.countDeployments')).toEqual({ projectId: 'p1', states: ['active', 'paused'], artifactId: '' });
});

test('otherwise its tokens are revoked, registry deletes it, and each of its webhooks goes too', async () => {
  const { ports, called } = recordingPorts({
    'rollout.countDeployments': () => ({ count: 0 }),
    'telemetry.listWebhooks': () => ({ webhooks: [{ id: 'w1' }, { id: 'w2' }] }),
  });
  await deleteProject(ports, caller, project);
  expect(called()).toEqual([
    'rollout.countDeployments',
    'tokens.revokeProjectTokens',
    'tokens.deleteGrants',
    'registry.deleteProject',
    'telemetry.listWebhooks',
    'telemetry.deleteWebhook',
    'telemetry.deleteWebhook',
  ]);
});
