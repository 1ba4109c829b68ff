import { useQuery } from '@tanstack/react-query';
import { answer, api } from './api';
import { queryKeys } from './query-keys';

export function useChannels(projectId: string) {
  return useQuery({ queryKey: queryKeys.channels(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/channels/', { params: { path: { id: projectId } } })) });
}

export function useGroups(projectId: string) {
  return useQuery({ queryKey: queryKeys.groups(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/groups/', { params: { path: { id: projectId } } })) });
}

/** Names by id, for showing a device's channel and groups. */
export function namesById(items: Array<{ id: string; name: string }> | undefined): Map<string, string> {
  return new Map((items ?? []).map((item) => [item.id, item.name]));
}
