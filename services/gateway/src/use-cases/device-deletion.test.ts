import type { registry } from '@ota/proto';
import { caller, recordingPorts } from '../../test/recording-ports';
import { deleteDeviceWithHistory } from './device-deletion';

const project = { id: 'p1', ownerId: 'user-1' } as registry.Project;
const device = { id: 'uuid-1', deviceId: 'unit-1' } as registry.Device;

test('history first, the record last, and the deletion audited', async () => {
  const { ports, called, requestOf } = recordingPorts();
  await deleteDeviceWithHistory(ports, caller, project, device);
  expect(called()).toEqual(['tokens.revokeDeviceTokens', 'rollout.deleteDeviceStates', 'registry.deleteDevice', 'audit.record']);
  expect(requestOf('registry.deleteDevice')).toEqual({ projectId: 'p1', ownerId: 'user-1', id: 'uuid-1' });
});

test('a step that fails stops the deletion before the record goes, so that a retry finds the device', async () => {
  const { ports, called } = recordingPorts({
    'rollout.deleteDeviceStates': () => {
      throw new Error('rollout unavailable');
    },
  });
  await expect(deleteDeviceWithHistory(ports, caller, project, device)).rejects.toThrow('rollout unavailable');
  expect(called()).toEqual(['tokens.revokeDeviceTokens', 'rollout.deleteDeviceStates']);
});
