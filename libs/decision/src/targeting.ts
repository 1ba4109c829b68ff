import type { DecisionDeployment, DecisionDevice } from './model';

/**
 * Targeting (docs/api.md, "Targeting"): any id within a list matches; with both lists non-empty the device
 * must match a group and a channel; an empty list is no filter on its axis.
 */
export function targetsDevice(deployment: Pick<DecisionDeployment, 'targetGroupIds' | 'targetChannelIds'>, device: Pick<DecisionDevice, 'groupIds' | 'channelId'>): boolean {
  const groupMatch = deployment.targetGroupIds.length === 0 || deployment.targetGroupIds.some((id) => device.groupIds.includes(id));
  const channelMatch = deployment.targetChannelIds.length === 0 || deployment.targetChannelIds.includes(device.channelId);
  return groupMatch && channelMatch;
}
