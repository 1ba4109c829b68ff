import type { registry } from '@ota/proto';
import { caller, recordingPorts } from '../../test/recording-ports';
import { provisionDevice } from './device-provisioning';
import { issueDeviceToken, revokeDeviceToken } from './device-tokens';

const project = { id: 'p1', ownerId: 'user-1' } as registry.Project;
const createdAt = new Date('2026-11-23T10:00:00Z');
const answers = {
  'tokens.createToken': () => ({ raw: 'ota_dev_secret', token: { prefix: 'ota_dev', createdAt } }),
  'users.findUser': () => ({ plan: { maxDevices: 50, maxUploadsPerMonth: 0 } }),
  'registry.createDevice': (request: registry.CreateDeviceRequest) => ({ device: { id: 'uuid-1', deviceId: request.deviceId, tokenRequired: true } }),
};

test('issuing rotates: the old token is revoked before the new one is made, and registry is told once', async () => {
  const { ports, called, requestOf } = recordingPorts(answers);
  const issued = await issueDeviceToken(ports, caller, project, { id: 'uuid-1', deviceId: 'unit-1', tokenRequired: false } as registry.Device);
  expect(issued).toEqual({ token: 'ota_dev_secret', prefix: 'ota_dev', created_at: createdAt.toISOString() });
  expect(called()).toEqual(['tokens.revokeDeviceTokens', 'registry.updateDevice', 'tokens.createToken', 'audit.record']);
  expect(requestOf('registry.updateDevice')).toMatchObject({ id: 'uuid-1', tokenRequired: true });
  expect(requestOf('tokens.createToken')).toMatchObject({ kind: 'device', deviceUuid: 'uuid-1', deviceId: 'unit-1', projectId: 'p1' });
});

test('a device that already requires its token is not updated again', async () => {
  const { ports, called } = recordingPorts(answers);
  await issueDeviceToken(ports, caller, project, { id: 'uuid-1', deviceId: 'unit-1', tokenRequired: true } as registry.Device);
  expect(called()).not.toContain('registry.updateDevice');
});

test('revoking lets the device use the project token again', async () => {
  const { ports, called, requestOf } = recordingPorts(answers);
  await revokeDeviceToken(ports, caller, project, { id: 'uuid-1', deviceId: 'unit-1', tokenRequired: true } as registry.Device);
  expect(called()).toEqual(['tokens.revokeDeviceTokens', 'registry.updateDevice', 'audit.record']);
  expect(requestOf('registry.updateDevice')).toMatchObject({ id: 'uuid-1', tokenRequired: false });
});

test("provisioning counts against the owner's plan as read now, and gives the device a token of its own", async () => {
  const { ports, called, requestOf } = recordingPorts(answers);
  const { device, token } = await provisionDevice(ports, caller, project, { deviceId: 'unit-2' } as never);
  expect(device.id).toBe('uuid-1');
  expect(token.token).toBe('ota_dev_secret');
  expect(requestOf('registry.createDevice')).toMatchObject({ projectId: 'p1', ownerId: 'user-1', maxDevices: 50, deviceId: 'unit-2', tokenRequired: true });
  // Registry made it with tokenRequired already set: the token is issued without a second update.
  expect(called()).toEqual(['users.findUser', 'registry.createDevice', 'audit.record', 'tokens.revokeDeviceTokens', 'tokens.createToken', 'audit.record']);
});
