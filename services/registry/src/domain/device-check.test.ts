import type { ArtifactSummary, DecisionDeployment, DecisionViews, OfferOutcome } from '@ota/decision';
import { checkDevice, type CheckStore, type DeviceCheckDeps, type DeviceCheckInput } from './device-check';
import { HealthTallies } from './device-health';
import type { DecisionRecordWrite, Device } from './model';

const DEVICE = { id: 'uuid-1', channelId: 'stable', groupIds: ['g1'], checkCount: 41, lastCheckStatus: 'up_to_date' } as Device;

const deployment = (id: string, overrides: Partial<DecisionDeployment> = {}): DecisionDeployment => ({
  id,
  projectId: 'p1',
  artifactId: `artifact-of-${id}`,
  state: 'active',
  targetGroupIds: [],
  targetChannelIds: ['stable'],
  rolloutPercentage: 100,
  createdAt: new Date(1_000),
  startedAt: new Date(2_000),
  ...overrides,
});

const artifact = (id: string, buildNumber: number): ArtifactSummary => ({
  id,
  projectId: 'p1',
  buildNumber,
  versionLabel: `1.0.${buildNumber}`,
  framework: 'esp_idf',
  chipFamily: 'esp32',
  boardId: '',
  hardwareRevision: '',
  partitionProfile: '',
  minNvsSchemaVersion: null,
  securityMode: '',
  checksumSha256: 'c',
  fileSize: 10,
  archived: false,
  signature: '',
  signingKeyId: '',
  storageKey: '',
  image: null,
});

/** How the check finds the device: stored (as given), or unknown and then registered, or unknown over the owner's cap. */
type Stored = { device: Device } | 'registers' | 'over_limit';

/** A fake store and rollout that answer as told and write down every call; rollout answers each offer from `offerOutcomes` by deployment. */
function fakeDeps(stored: Stored, deployments: DecisionDeployment[] = [], offerOutcomes: Record<string, OfferOutcome> = {}, memberships: string[] = ['g1']) {
  const artifacts = new Map(deployments.map((d, index) => [d.artifactId, artifact(d.artifactId, 7 + index)]));
  const calls = {
    checkIns: [] as Date[],
    // The outcome a new device was registered with.
    outcomesOfNew: [] as string[],
    recorded: [] as DecisionRecordWrite[],
    trims: [] as number[],
    offers: [] as string[],
    offerCalls: [] as unknown[],
    failures: [] as unknown[],
    recordError: undefined as Error | undefined,
    membershipReads: [] as string[],
  };
  const views: DecisionViews<DecisionDeployment> = { activeDeployments: () => deployments, artifact: (id) => artifacts.get(id) };
  const store: CheckStore = {
    checkIn: async ({ at }) => {
      calls.checkIns.push(at);
      return typeof stored === 'object' ? stored.device : null;
    },
    findDefaultChannel: async () => ({ id: 'stable', projectId: 'p1', name: 'default', isDefault: true, createdAt: new Date(0) }),
    registerDevice: async (device) => {
      calls.outcomesOfNew.push(device.lastCheckStatus);
      return stored === 'over_limit' ? 'over_limit' : { device, created: true };
    },
    recordCheck: async (record) => {
      calls.recorded.push(record);
      if (calls.recordError) throw calls.recordError;
    },
    trimDecisionRecords: async (_id, throughSeq) => {
      calls.trims.push(throughSeq);
    },
    groupIdsOf: async (id) => {
      calls.membershipReads.push(id);
      return memberships;
    },
  };
  const deps: DeviceCheckDeps = {
    store,
    views,
    offers: {
      recordOffer: async ({ deploymentId }, call) => {
        calls.offers.push(deploymentId);
        calls.offerCalls.push(call);
        return offerOutcomes[deploymentId] ?? 'recorded';
      },
    },
    health: new HealthTallies(),
    warn: (error) => calls.failures.push(error),
  };
  return { deps, calls };
}

/** The check's own call: its deadline and trace, which the offer's confirmation runs under. */
const CALL = { requestId: 'check-1', deadline: 9_000 };

const input: DeviceCheckInput = {
  projectId: 'p1',
  ownerId: 'owner-1',
  deviceId: 'unit-1',
  viaProjectToken: true,
  maxDevices: 10,
  reported: { framework: 'esp_idf', chipFamily: 'esp32', versionLabel: '1.0.6' },
  currentBuildNumber: 6,
};

test('an offer confirmed by rollout is answered and recorded with its deployment, numbered after the count and status the check-in returned', async () => {
  const { deps, calls } = fakeDeps({ device: DEVICE }, [deployment('dep-1')]);
  deps.now = () => new Date(5_000);
  expect(await checkDevice(deps, input, CALL)).toMatchObject({ status: 'offered', deploymentId: 'dep-1', artifact: { buildNumber: 7 } });
  expect(calls.offers).toEqual(['dep-1']);
  expect(calls.offerCalls).toEqual([CALL]);
  expect(calls.checkIns).toEqual([new Date(5_000)]);
  expect(calls.recorded).toHaveLength(1);
  expect(calls.recorded[0]).toMatchObject({
    id: 'uuid-1',
    seq: 42,
    previousStatus: 'up_to_date',
    record: { createdAt: new Date(5_000), decision: 'offered', status: 'offered', deploymentId: 'dep-1', artifactBuildNumber: 7, reportedBuildNumber: 6, reportedVersion: '1.0.6' },
  });
});

test('nothing to offer: rollout is not asked, and the outcome is recorded', async () => {
  const { deps, calls } = fakeDeps({ device: DEVICE }, [deployment('dep-1', { targetChannelIds: ['beta'] })]);
  expect(await checkDevice(deps, input, CALL)).toMatchObject({ status: 'no_active_deployment' });
  expect(calls.offers).toEqual([]);
  expect(calls.recorded.map((record) => [record.seq, record.record.status])).toEqual([[42, 'no_active_deployment']]);
});

test('a deployment to groups is decided on the device\'s memberships, not on any groups the checked-in device carries', async () => {
  const toGroups = [deployment('dep-1', { targetChannelIds: [], targetGroupIds: ['g1'] })];
  // The device as checked in says g1; the memberships say the device left it.
  const left = fakeDeps({ device: DEVICE }, toGroups, {}, []);
  expect(await checkDevice(left.deps, input, CALL)).toMatchObject({ status: 'no_active_deployment' });
  expect([left.calls.membershipReads, left.calls.offers]).toEqual([['uuid-1'], []]);
  // The device as checked in has no g1; the memberships say the device is in it.
  const joined = fakeDeps({ device: { ...DEVICE, groupIds: [] } }, toGroups, {}, ['g1']);
  expect(await checkDevice(joined.deps, input, CALL)).toMatchObject({ status: 'offered', deploymentId: 'dep-1' });
});

test('a check reads no memberships when no active deployment of the project targets groups', async () => {
  const { deps, calls } = fakeDeps({ device: DEVICE }, [deployment('dep-1')], {}, []);
  expect(await checkDevice(deps, input, CALL)).toMatchObject({ status: 'offered' });
  expect(calls.membershipReads).toEqual([]);
});

test('a deployment rollout no longer holds active is left out, and the next best is offered', async () => {
  // dep-2 carries the higher build (8), so it is tried first.
  const { deps, calls } = fakeDeps({ device: DEVICE }, [deployment('dep-1'), deployment('dep-2')], { 'dep-2': 'not_active' });
  expect(await checkDevice(deps, input, CALL)).toMatchObject({ status: 'offered', deploymentId: 'dep-1' });
  expect(calls.offers).toEqual(['dep-2', 'dep-1']);
});

test('a deployment the device rolled back is not offered again, and the answer says so', async () => {
  const { deps, calls } = fakeDeps({ device: DEVICE }, [deployment('dep-1')], { 'dep-1': 'rolled_back' });
  expect(await checkDevice(deps, input, CALL)).toEqual({ status: 'not_in_rollout', message: 'the device rolled back this deployment; it is not offered again' });
  expect(calls.offers).toEqual(['dep-1']);
  expect(calls.recorded[0]!.record).toMatchObject({ decision: 'no_update', status: 'not_in_rollout' });
});

test('over the cap nothing is decided or recorded', async () => {
  const { deps, calls } = fakeDeps('over_limit', [deployment('dep-1')]);
  expect(await checkDevice(deps, input, CALL)).toMatchObject({ status: 'over_limit' });
  expect([calls.offers.length, calls.recorded.length]).toEqual([0, 0]);
});

test.each([
  ['an inactive device', { active: false }, 'device_inactive'],
  ['a device with its own token, checked with the project token', { tokenRequired: true }, 'token_required'],
] as const)('%s: recorded, nothing decided', async (_name, stored, status) => {
  const { deps, calls } = fakeDeps({ device: { ...DEVICE, ...stored } }, [deployment('dep-1')]);
  expect(await checkDevice(deps, input, CALL)).toMatchObject({ status });
  expect(calls.offers).toEqual([]);
  expect(calls.recorded.map((record) => [record.record.decision, record.record.status])).toEqual([['no_update', status]]);
});

test('a check that cannot be recorded is still answered, and the failure is reported', async () => {
  const { deps, calls } = fakeDeps({ device: DEVICE });
  calls.recordError = new Error('the store is away');
  expect(await checkDevice(deps, input, CALL)).toMatchObject({ status: 'no_active_deployment' });
  expect(calls.failures).toEqual([calls.recordError]);
});

test('a targeted build that declares board_id refuses a check that did not report it (400), recording no decision', async () => {
  const { deps, calls } = fakeDeps({ device: DEVICE }, [deployment('dep-1')]);
  deps.views = { activeDeployments: () => [deployment('dep-1')], artifact: (id) => ({ ...artifact(id, 7), boardId: 'devkit' }) };
  await expect(checkDevice(deps, input, CALL)).rejects.toThrow('board_id is required');
  expect(calls.recorded).toEqual([]);
});

test('a new device is registered with its outcome when no offer needs confirming: not with an offer, nor with a refused request', async () => {
  const nothingTargeted = fakeDeps('registers', [deployment('dep-1', { targetChannelIds: ['beta'] })]);
  await checkDevice(nothingTargeted.deps, input, CALL);
  expect(nothingTargeted.calls.outcomesOfNew).toEqual(['no_active_deployment']);

  const offered = fakeDeps('registers', [deployment('dep-1')]);
  await checkDevice(offered.deps, input, CALL);
  expect(offered.calls.outcomesOfNew).toEqual(['']);
  expect(offered.calls.offers).toEqual(['dep-1']);

  const refused = fakeDeps('registers', [deployment('dep-1')]);
  refused.deps.views = { activeDeployments: () => [deployment('dep-1')], artifact: (id) => ({ ...artifact(id, 7), boardId: 'devkit' }) };
  await expect(checkDevice(refused.deps, input, CALL)).rejects.toThrow('board_id is required');
  expect(refused.calls.outcomesOfNew).toEqual(['']);
});

test('a check with health counts what happened since the device\'s check before, on each side of each deployment that watches health', async () => {
  const before = { build: 6, resetReason: 'power_on', boots: 3, abnormalBoots: 1, uptimeSeconds: 7_200, at: new Date(1_000) };
  const device = { ...DEVICE, health: before };
  const watched = [deployment('dep-1', { watchesHealth: true }), deployment('dep-2'), deployment('dep-3', { watchesHealth: true, targetChannelIds: ['beta'] })];
  const { deps } = fakeDeps({ device }, watched);
  // An hour after the report before: the hour the device reports is all the registry's clock saw pass.
  deps.now = () => new Date(3_601_000);
  const health = { resetReason: 'panic', boots: 5, abnormalBoots: 2, uptimeSeconds: 10_800 };
  await checkDevice(deps, { ...input, health }, CALL);
  // dep-1 offers build 7 to a device on 6: it counts on the previous side, once, as its report before came before the start.
  expect(deps.health.take()).toEqual([
    { projectId: 'p1', deploymentId: 'dep-1', side: 'previous', periodStart: new Date(3_600_000), deviceSeconds: 3_600, abnormalResets: 1, devices: 1 },
  ]);

  // Without a report before there is nothing to compare with: it becomes the baseline, and counts
  // the device on its side, so that a firmware that starts reporting with the new build is counted.
  const { deps: first } = fakeDeps({ device: { ...DEVICE, health: null } }, watched);
  first.now = () => new Date(3_601_000);
  await checkDevice(first, { ...input, health }, CALL);
  expect(first.health.take()).toEqual([{ projectId: 'p1', deploymentId: 'dep-1', side: 'previous', periodStart: new Date(3_600_000), deviceSeconds: 0, abnormalResets: 0, devices: 1 }]);
  // Its next report adds its hours, and no device.
  const next = fakeDeps({ device: { ...DEVICE, health: { build: 6, resetReason: 'panic', boots: 5, abnormalBoots: 2, uptimeSeconds: 10_800, at: new Date(3_601_000) } } }, watched);
  next.deps.now = () => new Date(3_661_000);
  await checkDevice(next.deps, { ...input, health: { ...health, uptimeSeconds: 10_860 } }, CALL);
  expect(next.deps.health.take()).toEqual([{ projectId: 'p1', deploymentId: 'dep-1', side: 'previous', periodStart: new Date(3_600_000), deviceSeconds: 60, abnormalResets: 0, devices: 0 }]);
});

test('a new device is recorded as its first check, compared against the outcome it was registered with; a device token registers nothing', async () => {
  const { deps, calls } = fakeDeps('registers', [deployment('dep-1', { targetChannelIds: ['beta'] })]);
  expect(await checkDevice(deps, input, CALL)).toMatchObject({ status: 'no_active_deployment' });
  expect(calls.recorded.map((record) => [record.seq, record.previousStatus, record.record.status])).toEqual([[1, 'no_active_deployment', 'no_active_deployment']]);

  const viaDeviceToken = fakeDeps('registers');
  await expect(checkDevice(viaDeviceToken.deps, { ...input, viaProjectToken: false }, CALL)).rejects.toThrow('device not found');
  expect(viaDeviceToken.calls.outcomesOfNew).toEqual([]);
});

test('every 20th check trims the records beyond the newest 20, beside the answer; a failed trim is reported and the answer stands', async () => {
  const { deps, calls } = fakeDeps({ device: { ...DEVICE, checkCount: 39 } });
  await checkDevice(deps, input, CALL);
  expect(calls.trims).toEqual([20]);

  const notDue = fakeDeps({ device: { ...DEVICE, checkCount: 40 } });
  await checkDevice(notDue.deps, input, CALL);
  expect(notDue.calls.trims).toEqual([]);

  const failing = fakeDeps({ device: { ...DEVICE, checkCount: 59 } });
  const trimError = new Error('the store is away');
  failing.deps.store.trimDecisionRecords = async () => {
    throw trimError;
  };
  expect(await checkDevice(failing.deps, input, CALL)).toMatchObject({ status: 'no_active_deployment' });
  await new Promise((resolve) => setImmediate(resolve));
  expect(failing.calls.failures).toEqual([trimError]);
});
