import { admittedByRollout } from '@ota/decision';
import type { Deployment } from './model';
import { asIfActive, PREVIEW_SAMPLE_SIZE, PreviewTally, type FleetDevice } from './preview';
import { testArtifact, testDeployment } from '../../test/deployment-fixtures';

const fleetDevice = (overrides: Partial<FleetDevice> = {}): FleetDevice => ({
  id: 'uuid-1',
  deviceId: 'dev-1',
  active: true,
  channelId: 'stable',
  groupIds: [],
  framework: 'esp_idf',
  chipFamily: 'esp32',
  boardId: '',
  hardwareRevision: '',
  partitionProfile: '',
  nvsSchemaVersion: null,
  securityMode: '',
  chipRevision: null,
  secureVersion: null,
  currentBuildNumber: 1,
  ...overrides,
});

function tally(deployment: Deployment, devices: FleetDevice[], rolledBack: string[] = [], artifact = testArtifact()) {
  const preview = new PreviewTally(deployment, [deployment], (id) => (id === artifact.id ? artifact : undefined), (deviceUuid) =>
    rolledBack.includes(deviceUuid) ? new Set([deployment.id]) : new Set(),
  );
  for (const device of devices) preview.add(device);
  return Object.fromEntries([...preview.buckets].filter(([, bucket]) => bucket.count > 0).map(([outcome, bucket]) => [outcome, bucket.deviceIds]));
}

test('each device gets the outcome the check would answer, or why no check can be predicted', () => {
  const outcomes = tally(testDeployment(), [
    fleetDevice({ deviceId: 'old' }),
    fleetDevice({ deviceId: 'current', currentBuildNumber: 5 }),
    fleetDevice({ deviceId: 'other-chip', chipFamily: 'esp32s3' }),
    fleetDevice({ deviceId: 'off', active: false }),
    fleetDevice({ deviceId: 'beta', channelId: 'beta' }),
    fleetDevice({ deviceId: 'never-checked', framework: '', chipFamily: '' }),
    fleetDevice({ deviceId: 'went-back', id: 'uuid-back' }),
  ], ['uuid-back']);
  expect(outcomes).toEqual({
    offered: ['old'],
    up_to_date: ['current'],
    no_compatible_build: ['other-chip'],
    device_inactive: ['off'],
    not_targeted: ['beta'],
    unknown_hardware: ['never-checked'],
    not_in_rollout: ['went-back'],
  });
});

test('cohorts are the check’s: at 50% exactly the admitted devices are offered', () => {
  const deployment = testDeployment({ rolloutPercentage: 50 });
  const devices = Array.from({ length: 40 }, (_, i) => fleetDevice({ id: `uuid-${i}`, deviceId: `dev-${i}` }));
  const admitted = devices.filter((device) => admittedByRollout(deployment.id, device.id, 50)).map((device) => device.deviceId);
  const outcomes = tally(deployment, devices);
  expect(outcomes.offered).toEqual(admitted.slice(0, PREVIEW_SAMPLE_SIZE));
  expect(admitted.length).toBeGreaterThan(0);
  expect(admitted.length).toBeLessThan(40);
});

test('a device that left out a dimension the build declares would be refused, so its outcome is unknown', () => {
  const outcomes = tally(testDeployment(), [fleetDevice({ deviceId: 'no-board' }), fleetDevice({ deviceId: 'board', boardId: 'devkit' })], [], testArtifact({ boardId: 'devkit' }));
  expect(outcomes).toEqual({ unknown_hardware: ['no-board'], offered: ['board'] });
});

test('a preview counts every device but names at most 20 of each outcome', () => {
  const preview = new PreviewTally(testDeployment(), [testDeployment()], () => testArtifact(), () => new Set());
  for (let i = 0; i < 25; i++) preview.add(fleetDevice({ id: `uuid-${i}`, deviceId: `dev-${i}` }));
  expect(preview.total).toBe(25);
  expect(preview.buckets.get('offered')).toMatchObject({ count: 25 });
  expect(preview.buckets.get('offered')!.deviceIds).toHaveLength(PREVIEW_SAMPLE_SIZE);
});

test('a draft is previewed at its first stage, a paused deployment at its percentage', () => {
  const now = new Date(9_000);
  const stages = [{ percentage: 10, minWaitSeconds: 60, approvalRequired: false }, { percentage: 100, minWaitSeconds: 0, approvalRequired: false }];
  expect(asIfActive(testDeployment({ state: 'draft', startedAt: null, rolloutPercentage: 100, stages }), now)).toMatchObject({ state: 'active', rolloutPercentage: 10, startedAt: now });
  expect(asIfActive(testDeployment({ state: 'paused', rolloutPercentage: 40, stages }), now)).toMatchObject({ state: 'active', rolloutPercentage: 40 });
});
