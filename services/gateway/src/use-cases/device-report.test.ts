import { isDomainError } from '@ota/errors';
import type { registry, rollout } from '@ota/proto';
import { reportDeviceStatus, type DeviceReport, type DeviceReportPorts } from './device-report';

function fakePorts(device: Partial<registry.Device>) {
  const calls: string[] = [];
  const applied: registry.ApplyDeviceReportRequest[] = [];
  const ports: DeviceReportPorts = {
    registry: {
      getDevice: async () => {
        calls.push('getDevice');
        return { device: { id: 'uuid-1', tokenRequired: false, ...device } };
      },
      applyDeviceReport: async (request: registry.ApplyDeviceReportRequest) => {
        calls.push('applyDeviceReport');
        applied.push(request);
        return {};
      },
    } as unknown as DeviceReportPorts['registry'],
    rollout: {
      recordDeviceEvent: async (request: rollout.RecordDeviceEventRequest) => {
        calls.push(`recordDeviceEvent:${request.deviceId}`);
        return { accepted: true, finalStatus: 'confirmed' };
      },
    } as unknown as DeviceReportPorts['rollout'],
  };
  return { ports, calls, applied };
}

const report = (deviceUuid?: string): DeviceReport => ({
  projectId: 'p1',
  deviceId: 'unit-1',
  deviceUuid,
  body: { deployment_id: 'dep-1', event: 'confirmed', build_number: 7 },
  trace: { requestId: 'r1' },
});

test('with the project token the device is read first, then rollout stores the event, then registry applies the final status', async () => {
  const { ports, calls, applied } = fakePorts({});
  expect(await reportDeviceStatus(ports, report())).toEqual({ accepted: true, final_status: 'confirmed' });
  expect(calls).toEqual(['getDevice', 'recordDeviceEvent:uuid-1', 'applyDeviceReport']);
  expect(applied[0]).toMatchObject({ id: 'uuid-1', event: 'confirmed', buildNumber: 7 });
});

test("a device token names its device: nothing is read", async () => {
  const { ports, calls } = fakePorts({});
  await reportDeviceStatus(ports, report('uuid-9'));
  expect(calls).toEqual(['recordDeviceEvent:uuid-9', 'applyDeviceReport']);
});

test('a device with its own token may not report with the project token: refused before anything is stored', async () => {
  const { ports, calls } = fakePorts({ tokenRequired: true });
  const refusal = await reportDeviceStatus(ports, report()).catch((error: unknown) => error);
  expect(isDomainError(refusal) && refusal.kind).toBe('PermissionDenied');
  expect(calls).toEqual(['getDevice']);
});
