import type { registry } from '@ota/proto';
import { issueDeviceToken, type DeviceTokenPorts, type IssuedDeviceToken } from './device-tokens';
import type { Caller, RegistryPort, AccountStorePort } from './ports';

export interface DeviceProvisioningPorts extends DeviceTokenPorts {
  users: AccountStorePort<'findUser'>;
  registry: RegistryPort<'createDevice' | 'updateDevice'>;
}

/** A device as a developer pre-provisions it: the request less what the project and its owner decide. */
export type NewDevice = Omit<registry.CreateDeviceRequest, 'projectId' | 'ownerId' | 'maxDevices' | 'tokenRequired'>;

/**
 * Pre-provisions a device with a token of its own. Registry counts it against the owner's plan
 * cap (read fresh here, not from the check path's cache: a developer who just raised it expects it
 * to hold) and refuses a device_id the project has.
 */
export async function provisionDevice(
  ports: DeviceProvisioningPorts,
  caller: Caller,
  project: registry.Project,
  draft: NewDevice,
): Promise<{ device: registry.Device; token: IssuedDeviceToken }> {
  const owner = await ports.users.findUser(project.ownerId);
  const { device } = await ports.registry.createDevice(
    {
      ...draft,
      projectId: project.id,
      ownerId: project.ownerId,
      maxDevices: owner?.plan.maxDevices ?? 0,
      // It gets its own token below: from now on the shared project token may not speak for it.
      tokenRequired: true,
    },
    caller.call,
  );
  await ports.audit.record(caller.principal, {
    projectId: project.id,
    action: 'device.created',
    targetType: 'device',
    targetId: device!.id,
    details: { device_id: device!.deviceId },
  });
  return { device: device!, token: await issueDeviceToken(ports, caller, project, device!) };
}
