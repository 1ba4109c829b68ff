import { registry, type rollout } from '@ota/proto';
import { checkDevice, type DeviceCheck, type DeviceCheckPorts } from './device-check';

type RecordCheck = registry.RecordCheckRequest;

const DEVICE = { id: 'uuid-1', channelId: 'stable', groupIds: ['g1'], checkCount: 41 } as registry.Device;
const OFFER = { deploymentId: 'dep-1', artifactId: 'art-1', buildNumber: 7, versionLabel: '1.0.7' } as rollout.Offer;

/** Fake ports that answer as told and write down every call. */
function fakePorts(checkIn: Partial<registry.CheckInDeviceResponse>, decision: Partial<rollout.DecideOfferResponse> = { status: 'no_active_deployment', message: 'none' }) {
  const calls = { recorded: [] as RecordCheck[], decided: 0, decideRequests: [] as rollout.DecideOfferRequest[], capAskedFor: [] as string[], failures: [] as unknown[], recordError: undefined as Error | undefined };
  const ports: DeviceCheckPorts = {
    registry: {
      checkInDevice: async () => ({ outcome: registry.CheckInOutcome.CHECK_IN_OUTCOME_KNOWN, ...checkIn }) as registry.CheckInDeviceResponse,
      recordCheck: async (request: RecordCheck) => {
        calls.recorded.push(request);
        if (calls.recordError) throw calls.recordError;
        return {};
      },
    } as unknown as DeviceCheckPorts['registry'],
    rollout: {
      decideOffer: async (request: rollout.DecideOfferRequest) => {
        calls.decided += 1;
        calls.decideRequests.push(request);
        return decision as rollout.DecideOfferResponse;
      },
    } as unknown as DeviceCheckPorts['rollout'],
    maxDevicesOf: async (ownerId) => {
      calls.capAskedFor.push(ownerId);
      return 10;
    },
    recordFailed: (error) => calls.failures.push(error),
  };
  return { ports, calls };
}

const check = (viaProjectToken = true): DeviceCheck => ({
  projectId: 'p1',
  ownerId: 'owner-1',
  deviceId: 'unit-1',
  viaProjectToken,
  body: { framework: 'esp_idf', chip_family: 'esp32', current_build_number: 6, version_label: '1.0.6' },
  trace: { requestId: 'r1' },
});

test('an offer is decided by rollout and recorded with its deployment, the heartbeat and the slot read at check-in', async () => {
  const { ports, calls } = fakePorts({ device: DEVICE }, { status: 'offered', message: '', offer: OFFER });
  expect(await checkDevice(ports, check())).toEqual({ status: 'offered', offer: OFFER });
  expect(calls.recorded).toHaveLength(1);
  expect(calls.recorded[0]).toMatchObject({ id: 'uuid-1', checkCount: 41, heartbeat: true, event: { decision: 'offered', status: 'offered', deploymentId: 'dep-1', artifactBuildNumber: 7, reportedBuildNumber: 6, reportedVersion: '1.0.6' } });
});

test('rollout is told the reported hardware in its hardware field, again flat for a rollout of the previous release, and which optional fields were sent', async () => {
  const { ports, calls } = fakePorts({ device: DEVICE });
  const body = { ...check().body, hardware_revision: 'rev2', nvs_schema_version: 0, security_mode: 'flash_encryption' };
  await checkDevice(ports, { ...check(), body });
  const hardware = { framework: 'esp_idf', chipFamily: 'esp32', boardId: '', hardwareRevision: 'rev2', partitionProfile: '', nvsSchemaVersion: 0, securityMode: 'flash_encryption' };
  expect(calls.decideRequests.map((request) => request.device)).toEqual([
    { id: 'uuid-1', channelId: 'stable', groupIds: ['g1'], hardware, ...hardware, boardIdReported: false, hardwareRevisionReported: true, currentBuildNumber: 6 },
  ]);
});

test('over the cap nothing is decided or recorded', async () => {
  const { ports, calls } = fakePorts({ outcome: registry.CheckInOutcome.CHECK_IN_OUTCOME_OVER_LIMIT });
  expect(await checkDevice(ports, check())).toMatchObject({ status: 'over_limit' });
  expect([calls.decided, calls.recorded.length]).toEqual([0, 0]);
});

test.each([
  [registry.CheckInOutcome.CHECK_IN_OUTCOME_INACTIVE, 'device_inactive'],
  [registry.CheckInOutcome.CHECK_IN_OUTCOME_TOKEN_REQUIRED, 'token_required'],
])('outcome %s: recorded without a heartbeat, nothing decided', async (outcome, status) => {
  const { ports, calls } = fakePorts({ outcome, device: DEVICE });
  expect(await checkDevice(ports, check())).toMatchObject({ status });
  expect(calls.decided).toBe(0);
  expect(calls.recorded.map((request) => [request.heartbeat, request.event?.status])).toEqual([[false, status]]);
});

test('a check that cannot be recorded is still answered, and the failure is reported', async () => {
  const { ports, calls } = fakePorts({ device: DEVICE });
  calls.recordError = new Error('registry is away');
  expect(await checkDevice(ports, check())).toEqual({ status: 'no_active_deployment', message: 'none' });
  expect(calls.failures).toEqual([calls.recordError]);
});

test("only the project token registers, so only it asks for the owner's cap", async () => {
  const withProjectToken = fakePorts({ device: DEVICE });
  await checkDevice(withProjectToken.ports, check(true));
  expect(withProjectToken.calls.capAskedFor).toEqual(['owner-1']);
  const withDeviceToken = fakePorts({ device: DEVICE });
  await checkDevice(withDeviceToken.ports, check(false));
  expect(withDeviceToken.calls.capAskedFor).toEqual([]);
});
