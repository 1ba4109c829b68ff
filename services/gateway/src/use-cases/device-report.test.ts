import type { registry } from '@ota/proto';
import { reportDeviceStatus, type DeviceReport, type DeviceReportPorts } from './device-report';

function fakePorts() {
  const calls: registry.ReportDeviceStatusRequest[] = [];
  const ports: DeviceReportPorts = {
    registry: {
      reportDeviceStatus: async (request: registry.ReportDeviceStatusRequest) => {
        calls.push(request);
        return { accepted: true, finalStatus: 'confirmed' };
      },
    } as unknown as DeviceReportPorts['registry'],
  };
  return { ports, calls };
}

const report = (viaProjectToken: boolean, body: Partial<DeviceReport['body']> = {}): DeviceReport => ({
  projectId: 'p1',
  deviceId: 'unit-1',
  viaProjectToken,
  body: { deployment_id: 'dep-1', event: 'confirmed', build_number: 7, ...body },
  call: { requestId: 'r1' },
});

test('a report is one call to registry, which answers with the status rollout stored', async () => {
  const { ports, calls } = fakePorts();
  expect(await reportDeviceStatus(ports, report(true))).toEqual({ accepted: true, final_status: 'confirmed' });
  expect(calls).toEqual([
    { projectId: 'p1', deviceId: 'unit-1', viaProjectToken: true, deploymentId: 'dep-1', event: 'confirmed', buildNumber: 7, reason: '', detailJson: '' },
  ]);
});

test('the token kind, the reason and the detail travel as the device sent them', async () => {
  const { ports, calls } = fakePorts();
  await reportDeviceStatus(ports, report(false, { event: 'failed', build_number: undefined, reason: 'checksum', detail: { at: 3 } }));
  expect(calls[0]).toMatchObject({ viaProjectToken: false, event: 'failed', buildNumber: undefined, reason: 'checksum', detailJson: '{"at":3}' });
});
