import { isDomainError } from '@ota/errors';
import { caller, recordingPorts } from '../../test/recording-ports';
import { createDeployment, deploymentProgress, transitionDeployment, type NewDeployment } from './deployments';

const draft = (targets: Partial<NewDeployment>): NewDeployment => ({
  artifactId: 'a1',
  targetGroupIds: [],
  targetChannelIds: [],
  rolloutPercentage: 10,
  rolloutStrategy: '',
  notes: '',
  guardrails: undefined,
  stages: [],
  ...targets,
});
const registryAnswers = {
  'registry.listGroups': () => ({ groups: [{ id: 'g1' }] }),
  'registry.listChannels': () => ({ channels: [{ id: 'c1' }] }),
  'rollout.createDeployment': () => ({ deployment: { id: 'd1' } }),
};

test('targets that are groups and channels of the project make a draft', async () => {
  const { ports, called, requestOf } = recordingPorts(registryAnswers);
  await createDeployment(ports, caller, 'p1', draft({ targetGroupIds: ['g1'], targetChannelIds: ['c1'] }));
  expect(called()).toEqual(['registry.listGroups', 'registry.listChannels', 'rollout.createDeployment']);
  expect(requestOf('rollout.createDeployment')).toMatchObject({ projectId: 'p1', start: false, targetGroupIds: ['g1'] });
});

test('no targets: registry is not asked', async () => {
  const { ports, called } = recordingPorts(registryAnswers);
  await createDeployment(ports, caller, 'p1', draft({}));
  expect(called()).toEqual(['rollout.createDeployment']);
});

test.each([
  [{ targetGroupIds: ['g1', 'g-other'] }, 'target_group_ids names no group of this project: g-other'],
  [{ targetChannelIds: ['c-other'] }, 'target_channel_ids names no channel of this project: c-other'],
])('an unknown target is refused and nothing is created', async (targets, message) => {
  const { ports, called } = recordingPorts(registryAnswers);
  const refusal = await createDeployment(ports, caller, 'p1', draft(targets)).catch((error: unknown) => error);
  expect(isDomainError(refusal) && refusal.kind).toBe('InvalidArgument');
  expect((refusal as Error).message).toBe(message);
  expect(called()).not.toContain('rollout.createDeployment');
});

test.each([
  ['start', true, 'deployment.started'],
  ['resume', true, 'deployment.resumed'],
  ['pause', false, 'deployment.paused'],
  ['cancel', false, 'deployment.cancelled'],
])('%s counts the devices only when confirm_all may matter, and is audited', async (action, counts, auditAction) => {
  const { ports, called, requestOf, calls } = recordingPorts({
    'rollout.getDeployment': () => ({ deployment: { id: 'd1', artifactId: 'a1', state: 'paused', rolloutPercentage: 10 } }),
    'rollout.listBuildHolds': () => ({ holds: [] }),
    'registry.countDevices': () => ({ count: 2 }),
    'rollout.transitionDeployment': () => ({ deployment: { id: 'd1', state: 'active', rolloutPercentage: 10, targetGroupIds: ['g1'], targetChannelIds: [] } }),
  });
  await transitionDeployment(ports, { ...caller, role: 'operator' }, 'p1', { deploymentId: 'd1', action, rolloutPercentage: undefined, confirmAll: false });
  // A start or resume also has the targets counted behind the answer, for the summaries to come;
  // a start asks which images the devices run, for the build's delta patches. Both read what
  // holds the build back first.
  const behind = action === 'start' ? ['registry.countDevices', 'registry.countCurrentImages'] : ['registry.countDevices'];
  const holdsRead = ['rollout.getDeployment', 'rollout.listBuildHolds'];
  expect(called()).toEqual(counts ? [...holdsRead, 'registry.countDevices', 'rollout.transitionDeployment', 'audit.record', ...behind] : ['rollout.transitionDeployment', 'audit.record']);
  if (counts) {
    expect(calls.filter((call) => call.name === 'registry.countDevices').map((call) => call.args[0])).toEqual([
      { projectId: 'p1', groupIds: [], channelIds: [], atMost: 2, maxAgeMs: 0 },
      { projectId: 'p1', groupIds: ['g1'], channelIds: [], atMost: 0, maxAgeMs: 120_000 },
    ]);
    expect(requestOf('rollout.listBuildHolds')).toEqual({ projectId: 'p1', artifactId: 'a1', exceptDeploymentId: 'd1' });
  }
  expect(requestOf('rollout.transitionDeployment')).toMatchObject({ projectDeviceCount: counts ? 2 : 0 });
  expect(calls.find((call) => call.name === 'audit.record')!.args[1]).toMatchObject({ action: auditAction, targetId: 'd1' });
});

test("progress counts the devices the deployment's own targets reach", async () => {
  const { ports, requestOf } = recordingPorts({
    'rollout.getDeployment': () => ({ deployment: { id: 'd1', targetGroupIds: ['g1'], targetChannelIds: [] } }),
    'rollout.getDeploymentSummary': () => ({ devicesByStatus: { offered: 3 }, failureCount: 0, failuresByReason: {} }),
    'registry.countDevices': () => ({ count: 40 }),
  });
  const progress = await deploymentProgress(ports, caller, 'p1', 'd1');
  expect(progress.targetedDevices).toBe(40);
  expect(requestOf('registry.countDevices')).toEqual({ projectId: 'p1', groupIds: ['g1'], channelIds: [], atMost: 0, maxAgeMs: 120_000 });
});

const HOLD = { deploymentId: 'd0', kind: 'guardrail_pause', detail: 'deployment d0 was paused by its failure_threshold guardrail: 3 of 5 finished devices failed' };

test.each([
  ['operator', false, 'PermissionDenied', 'needs the approver role'],
  ['approver', false, 'InvalidArgument', 'send override_holds: true'],
  ['operator', true, 'PermissionDenied', 'needs the approver role'],
])('a start of a held build by an %s (override_holds %s) is refused before rollout is asked to move it', async (role, overrideHolds, kind, words) => {
  const { ports, called } = recordingPorts({
    'rollout.getDeployment': () => ({ deployment: { id: 'd1', artifactId: 'a1', buildNumber: 7, state: 'draft', rolloutPercentage: 100 } }),
    'rollout.listBuildHolds': () => ({ holds: [HOLD] }),
  });
  const refusal = await transitionDeployment(ports, { ...caller, role: role as 'operator' }, 'p1', { deploymentId: 'd1', action: 'start', confirmAll: true, overrideHolds }).catch((error: unknown) => error);
  expect(isDomainError(refusal) && refusal.kind).toBe(kind);
  expect((refusal as Error).message).toContain(HOLD.detail);
  expect((refusal as Error).message).toContain(words);
  expect(called()).toEqual(['rollout.getDeployment', 'rollout.listBuildHolds']);
});

test("an approver's start with override_holds goes around the holds, and the audit names them", async () => {
  const { ports, calls } = recordingPorts({
    'rollout.getDeployment': () => ({ deployment: { id: 'd1', artifactId: 'a1', buildNumber: 7, state: 'draft', rolloutPercentage: 100 } }),
    'rollout.listBuildHolds': () => ({ holds: [HOLD] }),
    'registry.countDevices': () => ({ count: 2 }),
    'rollout.transitionDeployment': () => ({ deployment: { id: 'd1', state: 'active', rolloutPercentage: 100, targetGroupIds: [], targetChannelIds: [] } }),
  });
  const result = await transitionDeployment(ports, { ...caller, role: 'approver' }, 'p1', { deploymentId: 'd1', action: 'start', confirmAll: true, overrideHolds: true });
  expect(result.overriddenHolds).toEqual([HOLD]);
  expect(calls.find((call) => call.name === 'audit.record')!.args[1]).toMatchObject({ details: { overridden_holds: [{ deployment_id: 'd0', kind: 'guardrail_pause', detail: HOLD.detail }] } });
});

test("an operator's resume of a deployment a guardrail paused is refused, naming the approver role", async () => {
  const { ports, called } = recordingPorts({
    'rollout.getDeployment': () => ({ deployment: { id: 'd1', artifactId: 'a1', state: 'paused', rolloutPercentage: 10, guardrailPause: { guardrail: 'failure_threshold' } } }),
  });
  const refusal = await transitionDeployment(ports, { ...caller, role: 'operator' }, 'p1', { deploymentId: 'd1', action: 'resume', rolloutPercentage: 10, confirmAll: false }).catch((error: unknown) => error);
  expect(isDomainError(refusal) && refusal.kind).toBe('PermissionDenied');
  expect((refusal as Error).message).toBe("Resuming a deployment the failure_threshold guardrail paused needs the approver role in this project; the caller's role is operator");
  expect(called()).toEqual(['rollout.getDeployment']);
});
