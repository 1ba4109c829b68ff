import type { registry } from '@ota/proto';
import type { AuditLog, Caller, RegistryPort, RolloutPort, AccountStorePort } from './ports';

export interface DeviceDeletionPorts {
  tokens: AccountStorePort<'revokeDeviceTokens'>;
  rollout: RolloutPort<'deleteDeviceStates'>;
  registry: RegistryPort<'deleteDevice'>;
  audit: AuditLog;
}

/**
 * Deletes a device with its history: its token, its rollout states, lifecycle events and
 * decision records, then the record itself. History first and the record last: every step is safe
 * to repeat, so a retried call finishes what a failed one started.
 */
export async function deleteDeviceWithHistory(ports: DeviceDeletionPorts, caller: Caller, project: registry.Project, device: registry.Device): Promise<void> {
  const { call } = caller;
  await ports.tokens.revokeDeviceTokens(device.id);
  await ports.rollout.deleteDeviceStates({ projectId: project.id, deviceUuid: device.id }, call);
  await ports.registry.deleteDevice({ projectId: project.id, ownerId: project.ownerId, id: device.id }, call);
  await ports.audit.record(caller.principal, { projectId: project.id, action: 'device.deleted', targetType: 'device', targetId: device.id, details: { device_id: device.deviceId } });
}
