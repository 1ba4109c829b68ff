import type { Deployment } from './model';
import { targetsDevice } from '@ota/decision';

export type CheckState = 'never_seen' | 'waiting_for_next_check' | 'no_pending_check';

export interface DeviceForCheckState {
  channelId: string;
  groupIds: string[];
  lastSeen?: Date | undefined;
  lastCheckAt?: Date | undefined;
}

/**
 * docs/api.md, "Device": `never_seen` without a heartbeat or a recorded check; `waiting_for_next_check` when an
 * active deployment targets the device (the check's own targeting rules) and no check was recorded
 * since it started; `no_pending_check` otherwise.
 */
export function checkStateOf(device: DeviceForCheckState, activeDeployments: readonly Deployment[]): CheckState {
  if (!device.lastSeen && !device.lastCheckAt) return 'never_seen';
  const owed = activeDeployments.some((deployment) => {
    if (!targetsDevice(deployment, device)) return false;
    const startedAt = deployment.startedAt ?? deployment.createdAt;
    return !device.lastCheckAt || device.lastCheckAt < startedAt;
  });
  return owed ? 'waiting_for_next_check' : 'no_pending_check';
}
