// What every page of a project asks first: the project, whether the signed-in user may change it,
// and the note shown where they may not. Shared by the pages, so that no page imports another.
import { useQuery } from '@tanstack/react-query';
import { answer, api } from './api';
import { queryKeys } from './query-keys';
import { useSession } from './session';

export function useProject(projectId: string) {
  return useQuery({ queryKey: queryKeys.project(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/', { params: { path: { id: projectId } } })) });
}

/**
 * Whether the signed-in user may change this project: its owner may; staff may read every
 * project but write only their own (the API answers 403), so the console does not offer it.
 */
export function useProjectWrite(projectId: string): boolean {
  const session = useSession().data;
  const project = useProject(projectId).data;
  return Boolean(session && project && project.owner_id === session.user.id);
}

/** Shown on a project staff read but do not own. */
export function ReadOnlyNote({ projectId }: { projectId: string }) {
  const project = useProject(projectId).data;
  const writable = useProjectWrite(projectId);
  if (!project || writable) return null;
  return (
    <p className="stale" role="note" data-testid="read-only">
      Read-only: this project belongs to another user. Staff can read it; only its owner can change it.
    </p>
  );
}
