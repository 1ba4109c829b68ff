import type { registry, rollout } from '@ota/proto';
import { checkDevice, type DeviceCheck, type DeviceCheckPorts } from './device-check';

const OFFER = { deploymentId: 'dep-1', artifactId: 'art-1', buildNumber: 7, versionLabel: '1.0.7' } as rollout.Offer;

/** Fake ports that answer as told and write down every call. */
function fakePorts(answer: Partial<registry.CheckDeviceResponse> = { status: 'no_active_deployment', message: 'none' }) {
  const calls = { requests: [] as registry.CheckDeviceRequest[], capAskedFor: [] as string[] };
  const ports: DeviceCheckPorts = {
    registry: {
      checkDevice: async (request: registry.CheckDeviceRequest) => {
        calls.requests.push(request);
        return answer as registry.CheckDeviceResponse;
      },
    } as unknown as DeviceCheckPorts['registry'],
    maxDevicesOf: async (ownerId) => {
      calls.capAskedFor.push(ownerId);
      return 10;
    },
  };
  return { ports, calls };
}

const check = (viaProjectToken = true): DeviceCheck => ({
  projectId: 'p1',
  ownerId: 'owner-1',
  deviceId: 'unit-1',
  viaProjectToken,
  body: { framework: 'esp_idf', chip_family: 'esp32', current_build_number: 6, version_label: '1.0.6' },
  call: { requestId: 'r1' },
});

test('an offer comes back as the answer', async () => {
  const { ports } = fakePorts({ status: 'offered', message: 'build 7 is offered', offer: OFFER });
  expect(await checkDevice(ports, check())).toEqual({ status: 'offered', offer: OFFER });
});

test('a routine outcome comes back with its message', async () => {
  const { ports } = fakePorts();
  expect(await checkDevice(ports, check())).toEqual({ status: 'no_active_deployment', message: 'none' });
});

test('registry is told what the device reported, with each field it left out unset', async () => {
  const { ports, calls } = fakePorts();
  const body = { ...check().body, hardware_revision: 'rev2', nvs_schema_version: 0, security_mode: 'flash_encryption' };
  await checkDevice(ports, { ...check(), body });
  expect(calls.requests).toEqual([
    {
      projectId: 'p1',
      ownerId: 'owner-1',
      deviceId: 'unit-1',
      viaProjectToken: true,
      maxDevices: 10,
      reported: {
        framework: 'esp_idf',
        chipFamily: 'esp32',
        boardId: undefined,
        hardwareRevision: 'rev2',
        partitionProfile: undefined,
        nvsSchemaVersion: 0,
        securityMode: 'flash_encryption',
        versionLabel: '1.0.6',
        currentHash: undefined,
      },
      currentBuildNumber: 6,
    },
  ]);
});

test("only the project token registers, so only it asks for the owner's cap", async () => {
  const withProjectToken = fakePorts();
  await checkDevice(withProjectToken.ports, check(true));
  expect(withProjectToken.calls.capAskedFor).toEqual(['owner-1']);
  const withDeviceToken = fakePorts();
  await checkDevice(withDeviceToken.ports, check(false));
  expect(withDeviceToken.calls.capAskedFor).toEqual([]);
  expect(withDeviceToken.calls.requests[0]).toMatchObject({ viaProjectToken: false, maxDevices: 0 });
});
