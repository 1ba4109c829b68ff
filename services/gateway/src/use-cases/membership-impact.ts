import type { registry, rollout } from '@ota/proto';
import type { Caller, RegistryPort, RolloutPort } from './ports';

/** What a bulk membership change would do to one deployment that targets the group. */
export interface DeploymentImpact {
  deployment: rollout.Deployment;
  /** Devices the deployment would newly target. */
  gains: number;
  /** Of those, the ones on an earlier build than the deployment's: the ones it could offer it to. */
  gainsOnEarlierBuilds: number;
  /** Devices it would no longer target. */
  loses: number;
}

type TargetedDevice = Pick<registry.Device, 'id' | 'channelId' | 'groupIds' | 'currentBuildNumber'>;

/** Whether `deployment` targets `device` when the device is in `groupIds` (docs/api.md, "Targeting"). */
function targets(deployment: rollout.Deployment, device: TargetedDevice, groupIds: readonly string[]): boolean {
  const group = deployment.targetGroupIds.length === 0 || deployment.targetGroupIds.some((id) => groupIds.includes(id));
  const channel = deployment.targetChannelIds.length === 0 || deployment.targetChannelIds.includes(device.channelId);
  return group && channel;
}

/**
 * For each active or paused deployment that targets the group, how many devices the change would
 * give it and take from it: a device counts where the deployment's targeting of it changes (a
 * device also in another of its groups, or on a channel it leaves out, changes nothing).
 */
export function membershipImpact(
  deployments: readonly rollout.Deployment[],
  devices: readonly TargetedDevice[],
  change: { groupId: string; add: readonly string[]; remove: readonly string[] },
): DeploymentImpact[] {
  const adding = new Set(change.add);
  const removing = new Set(change.remove);
  return deployments
    .filter((deployment) => (deployment.state === 'active' || deployment.state === 'paused') && deployment.targetGroupIds.includes(change.groupId))
    .map((deployment) => {
      let gains = 0;
      let gainsOnEarlierBuilds = 0;
      let loses = 0;
      for (const device of devices) {
        // A device named in both lists ends outside the group: the change adds, then removes.
        const after = removing.has(device.id)
          ? device.groupIds.filter((id) => id !== change.groupId)
          : adding.has(device.id)
            ? [...new Set([...device.groupIds, change.groupId])]
            : device.groupIds;
        const before = targets(deployment, device, device.groupIds);
        const now = targets(deployment, device, after);
        if (now && !before) {
          gains += 1;
          if (Number(device.currentBuildNumber) < Number(deployment.buildNumber)) gainsOnEarlierBuilds += 1;
        }
        if (before && !now) loses += 1;
      }
      return { deployment, gains, gainsOnEarlierBuilds, loses };
    });
}

export interface MembershipImpactPorts {
  registry: RegistryPort<'listDevices'>;
  rollout: RolloutPort<'listDeployments'>;
}

/** The impact of a change, read from the services: the project's deployments and the devices named. */
export async function readMembershipImpact(
  ports: MembershipImpactPorts,
  caller: Caller,
  projectId: string,
  change: { groupId: string; add: readonly string[]; remove: readonly string[] },
): Promise<DeploymentImpact[]> {
  const ids = [...new Set([...change.add, ...change.remove])];
  const [{ deployments }, { devices }] = await Promise.all([
    ports.rollout.listDeployments({ projectId }, caller.call),
    ids.length === 0
      ? { devices: [] }
      : ports.registry.listDevices({ projectId, active: undefined, groupId: '', channelId: '', search: '', chipFamily: '', limit: 0, afterDeviceId: '', afterId: '', deviceId: '', ids }, caller.call),
  ]);
  return membershipImpact(deployments, devices, change);
}
