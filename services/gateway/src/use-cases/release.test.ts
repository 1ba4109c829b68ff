import { isDomainError } from '@ota/errors';
import type { artifacts } from '@ota/proto';
import { caller, recordingPorts } from '../../test/recording-ports';
import { resolveReleaseTarget, startRelease } from './release';

const channels = () => ({ channels: [{ id: 'c-stable', name: 'stable' }, { id: 'c-beta', name: 'beta' }] });
const admin = { ...caller, role: 'admin' as const };
/** The project's stored builds: one ESP32-C3 image at secure_version 2. */
const builds = () => ({ artifacts: [{ id: 'a1', buildNumber: 1, checksumSha256: 'aa', image: { chip: 'esp32c3', secureVersion: 2 } }] });
/** A binary read by the release: its image, and bytes that match no stored build unless said. */
const binary = (image: { chip: string; secureVersion: number } | null, checksumSha256 = 'ff') => ({ image, checksumSha256 });

test('the defaults are the stable channel at 100 percent', async () => {
  const { ports } = recordingPorts({ 'registry.listChannels': channels, 'artifacts.listArtifacts': builds });
  expect(await resolveReleaseTarget(ports, admin, 'p1', new Map(), binary(null))).toEqual({ channel: { id: 'c-stable', name: 'stable' }, rolloutPercentage: 100, secureVersionRaise: null, overriddenHolds: [] });
});

test.each([['101'], ['-1'], ['5.5'], ['']])('rollout_percentage %p is refused before registry is asked', async (text) => {
  const { ports, called } = recordingPorts({ 'registry.listChannels': channels });
  const refusal = await resolveReleaseTarget(ports, admin, 'p1', new Map([['rollout_percentage', text]]), binary(null)).catch((error: unknown) => error);
  expect(isDomainError(refusal) && refusal.kind).toBe('InvalidArgument');
  expect(called()).toEqual([]);
});

test('a channel the project does not have is refused by name', async () => {
  const { ports } = recordingPorts({ 'registry.listChannels': channels });
  await expect(resolveReleaseTarget(ports, admin, 'p1', new Map([['channel_name', 'nightly']]), binary(null))).rejects.toThrow('channel "nightly" does not exist in this project');
});

test('an image that raises secure_version needs the acknowledgment, by an approver', async () => {
  const { ports } = recordingPorts({ 'registry.listChannels': channels, 'artifacts.listArtifacts': builds });
  const raising = { chip: 'esp32c3', secureVersion: 3 };
  const refusal = (role: 'operator' | 'approver', acknowledged: string) =>
    resolveReleaseTarget(ports, { ...caller, role }, 'p1', new Map([['acknowledge_secure_version_raise', acknowledged]]), binary(raising)).catch((error: unknown) => error);
  const unacknowledged = await refusal('approver', 'false');
  expect(isDomainError(unacknowledged, 'InvalidArgument') && unacknowledged.message).toMatch(/raises secure_version from 2 to 3/);
  expect(isDomainError(await refusal('operator', 'true'), 'PermissionDenied')).toBe(true);
  expect(isDomainError(await refusal('approver', 'maybe'), 'InvalidArgument')).toBe(true);
  const target = await resolveReleaseTarget(ports, { ...caller, role: 'approver' }, 'p1', new Map([['acknowledge_secure_version_raise', 'true']]), binary(raising));
  expect(target.secureVersionRaise).toEqual({ from: 2, to: 3, efuseBitsLeft: 13 });
  // The same version, another chip's image, or no image raises nothing.
  for (const image of [{ chip: 'esp32c3', secureVersion: 2 }, { chip: 'esp32s3', secureVersion: 0 }, null]) {
    expect((await resolveReleaseTarget(ports, { ...caller, role: 'operator' }, 'p1', new Map(), binary(image))).secureVersionRaise).toBeNull();
  }
});

test('the bytes of a held build are released again only by an approver who says so', async () => {
  const hold = { deploymentId: 'd0', kind: 'guardrail_pause', detail: 'deployment d0 was paused by its failure_threshold guardrail: 3 of 5 finished devices failed' };
  const { ports } = recordingPorts({ 'registry.listChannels': channels, 'artifacts.listArtifacts': builds, 'rollout.listBuildHolds': () => ({ holds: [hold] }) });
  const release = (role: 'operator' | 'approver', override: string) =>
    resolveReleaseTarget(ports, { ...caller, role }, 'p1', new Map([['override_holds', override]]), binary(null, 'aa')).catch((error: unknown) => error);
  expect(isDomainError(await release('operator', 'true'), 'PermissionDenied')).toBe(true);
  const unsaid = await release('approver', 'false');
  expect(isDomainError(unsaid, 'InvalidArgument') && unsaid.message).toContain('build 1 is held: deployment d0 was paused');
  expect(await release('approver', 'true')).toMatchObject({ overriddenHolds: [hold] });
});

test('the release starts its deployment in the same call, to the channel only, and is audited', async () => {
  const { ports, called, requestOf } = recordingPorts({ 'rollout.createDeployment': () => ({ deployment: { id: 'd1', state: 'active' } }) });
  const artifact = { id: 'a1', projectId: 'p1', buildNumber: 3 } as artifacts.Artifact;
  const deployment = await startRelease(ports, caller, artifact, { channel: { id: 'c-beta', name: 'beta' } as never, rolloutPercentage: 25, secureVersionRaise: null, overriddenHolds: [] });
  expect(deployment.id).toBe('d1');
  expect(requestOf('rollout.createDeployment')).toMatchObject({ projectId: 'p1', artifactId: 'a1', targetGroupIds: [], targetChannelIds: ['c-beta'], rolloutPercentage: 25, start: true });
  // Behind the answer: which images the devices run, for the build's delta patches.
  expect(called()).toEqual(['rollout.createDeployment', 'audit.record', 'registry.countCurrentImages']);
});
