import { useQuery } from '@tanstack/react-query';
import { get } from './api';
import type { Channel, Group } from './types';
import { queryKeys } from './query-keys';

export const projectPath = (projectId: string) => `/projects/${projectId}`;

export function useChannels(projectId: string) {
  return useQuery({ queryKey: queryKeys.channels(projectId), queryFn: () => get<Channel[]>(`${projectPath(projectId)}/channels/`) });
}

export function useGroups(projectId: string) {
  return useQuery({ queryKey: queryKeys.groups(projectId), queryFn: () => get<Group[]>(`${projectPath(projectId)}/groups/`) });
}

/** Names by id, for showing a device's channel and groups. */
export function namesById(items: Array<{ id: string; name: string }> | undefined): Map<string, string> {
  return new Map((items ?? []).map((item) => [item.id, item.name]));
}
