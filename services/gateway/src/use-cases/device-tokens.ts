import type { registry } from '@ota/proto';
import type { AuditLog, Caller, RegistryPort, AccountStorePort } from './ports';

export interface DeviceTokenPorts {
  tokens: AccountStorePort<'createToken' | 'revokeDeviceTokens'>;
  registry: RegistryPort<'updateDevice'>;
  audit: AuditLog;
}

export interface IssuedDeviceToken {
  token: string;
  prefix: string;
  created_at: string;
}

/**
 * Issues a device its own token. Issuing again rotates: the old token stops working at once. From
 * then on registry refuses the shared project token for this device (`token_required`).
 */
export async function issueDeviceToken(ports: DeviceTokenPorts, caller: Caller, project: registry.Project, device: registry.Device): Promise<IssuedDeviceToken> {
  await ports.tokens.revokeDeviceTokens(device.id);
  if (!device.tokenRequired) await setTokenRequired(ports, caller, project.id, device.id, true);
  const { token, raw } = await ports.tokens.createToken({
    kind: 'device',
    scope: '',
    role: null,
    name: `device ${device.deviceId}`,
    userId: project.ownerId,
    projectId: project.id,
    deviceUuid: device.id,
    deviceId: device.deviceId,
    // The device's, not a person's: it stays while the device does, whoever issued it.
    createdBy: '',
    expiresAt: null,
    signIn: null,
  });
  await ports.audit.record(caller.principal, {
    projectId: project.id,
    action: 'device_token.issued',
    targetType: 'device',
    targetId: device.id,
    details: { prefix: token.prefix },
  });
  return { token: raw, prefix: token.prefix, created_at: token.createdAt.toISOString() };
}

/** Revokes a device's token; without one of its own, the device may use the shared project token again. */
export async function revokeDeviceToken(ports: DeviceTokenPorts, caller: Caller, project: registry.Project, device: registry.Device): Promise<void> {
  await ports.tokens.revokeDeviceTokens(device.id);
  await setTokenRequired(ports, caller, project.id, device.id, false);
  await ports.audit.record(caller.principal, { projectId: project.id, action: 'device_token.revoked', targetType: 'device', targetId: device.id });
}

async function setTokenRequired(ports: DeviceTokenPorts, caller: Caller, projectId: string, id: string, tokenRequired: boolean) {
  await ports.registry.updateDevice({ projectId, id, active: undefined, metadata: undefined, channelId: undefined, tokenRequired }, caller.call);
}
