import { useQuery } from '@tanstack/react-query';
import { answer, api } from './api';
import { queryKeys } from './query-keys';

export function useChannels(projectId: string) {
  return useQuery({ queryKey: queryKeys.channels(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/channels/', { params: { path: { id: projectId } } })) });
}

export function useGroups(projectId: string) {
  return useQuery({ queryKey: queryKeys.groups(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/groups/', { params: { path: { id: projectId } } })) });
}

export function useArtifacts(projectId: string) {
  return useQuery({ queryKey: queryKeys.artifacts(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/artifacts/', { params: { path: { id: projectId } } })) });
}

/** What holds a build back (docs/api.md, "Holds on a build"), read again as deployments move. */
export function useBuildHolds(projectId: string, artifactId: string) {
  return useQuery({
    queryKey: queryKeys.holds(artifactId),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/artifacts/{aid}/holds/', { params: { path: { id: projectId, aid: artifactId } } })),
    enabled: artifactId !== '',
    refetchInterval: 5_000,
  });
}

/** Reads a single device; used where only its name is needed (an audit line). */
export function useDevice(projectId: string, id: string, enabled = true) {
  return useQuery({ queryKey: queryKeys.device(id), queryFn: () => answer(api.GET('/api/v1/projects/{id}/devices/{did}/', { params: { path: { id: projectId, did: id } } })), enabled, retry: false, staleTime: 60_000 });
}

/** Names by id, for showing a device's channel and groups. */
export function namesById(items: Array<{ id: string; name: string }> | undefined): Map<string, string> {
  return new Map((items ?? []).map((item) => [item.id, item.name]));
}
