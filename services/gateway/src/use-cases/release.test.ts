import { isDomainError } from '@ota/errors';
import type { artifacts } from '@ota/proto';
import { caller, recordingPorts } from '../../test/recording-ports';
import { resolveReleaseTarget, startRelease } from './release';

const channels = () => ({ channels: [{ id: 'c-stable', name: 'stable' }, { id: 'c-beta', name: 'beta' }] });

test('the defaults are the stable channel at 100 percent', async () => {
  const { ports } = recordingPorts({ 'registry.listChannels': channels });
  expect(await resolveReleaseTarget(ports, caller, 'p1', new Map())).toEqual({ channel: { id: 'c-stable', name: 'stable' }, rolloutPercentage: 100 });
});

test.each([['101'], ['-1'], ['5.5'], ['']])('rollout_percentage %p is refused before registry is asked', async (text) => {
  const { ports, called } = recordingPorts({ 'registry.listChannels': channels });
  const refusal = await resolveReleaseTarget(ports, caller, 'p1', new Map([['rollout_percentage', text]])).catch((error: unknown) => error);
  expect(isDomainError(refusal) && refusal.kind).toBe('InvalidArgument');
  expect(called()).toEqual([]);
});

test('a channel the project does not have is refused by name', async () => {
  const { ports } = recordingPorts({ 'registry.listChannels': channels });
  await expect(resolveReleaseTarget(ports, caller, 'p1', new Map([['channel_name', 'nightly']]))).rejects.toThrow('channel "nightly" does not exist in this project');
});

test('the release starts its deployment in the same call, to the channel only, and is audited', async () => {
  const { ports, called, requestOf } = recordingPorts({ 'rollout.createDeployment': () => ({ deployment: { id: 'd1', state: 'active' } }) });
  const artifact = { id: 'a1', projectId: 'p1', buildNumber: 3 } as artifacts.Artifact;
  const deployment = await startRelease(ports, caller, artifact, { channel: { id: 'c-beta', name: 'beta' } as never, rolloutPercentage: 25 });
  expect(deployment.id).toBe('d1');
  expect(requestOf('rollout.createDeployment')).toMatchObject({ projectId: 'p1', artifactId: 'a1', targetGroupIds: [], targetChannelIds: ['c-beta'], rolloutPercentage: 25, start: true });
  // Behind the answer: which images the devices run, for the build's delta patches.
  expect(called()).toEqual(['rollout.createDeployment', 'audit.record', 'registry.countCurrentImages']);
});
