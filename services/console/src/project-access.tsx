// What every page of a project asks first: the project, the signed-in person's role in it, and
// the note shown where that role may not act. Shared by the pages, so that no page imports another.
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { answer, api } from './api';
import { queryKeys } from './query-keys';

/** A role in a project (docs/api.md, "Roles"), each allowed all that the ones before it are. */
export type Role = 'viewer' | 'operator' | 'approver' | 'admin';
export const ROLES: readonly Role[] = ['viewer', 'operator', 'approver', 'admin'];

export function useProject(projectId: string) {
  return useQuery({ queryKey: queryKeys.project(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/', { params: { path: { id: projectId } } })) });
}

/** The signed-in person's role in the project, as the API answers it with the project; undefined while it loads. */
export function useProjectRole(projectId: string): Role | undefined {
  return useProject(projectId).data?.role;
}

export function roleAllows(held: Role | undefined, needed: Role): boolean {
  return held !== undefined && ROLES.indexOf(held) >= ROLES.indexOf(needed);
}

/** Whether the signed-in person's role allows what needs `needed` (an operator's change, by default). */
export function useProjectWrite(projectId: string, needed: Role = 'operator'): boolean {
  return roleAllows(useProjectRole(projectId), needed);
}

/** Why an action is not offered, in the words a disabled control's title and the notes use. */
export function roleReason(held: Role | undefined, needed: Role): string {
  return `needs the ${needed} role; yours is ${held ?? 'unknown'}`;
}

/** Shown where the person's role may not act: what it is, what is needed, and who can change it. */
export function ReadOnlyNote({ projectId, needed = 'operator', what = 'Changing this' }: { projectId: string; needed?: Role; what?: string }) {
  const role = useProjectRole(projectId);
  if (!role || roleAllows(role, needed)) return null;
  return (
    <p className="stale" role="note" data-testid="read-only">
      Your role in this project is <strong>{role}</strong>: {what.toLowerCase()} {roleReason(role, needed).replace(/; yours is .*/, '')}. An admin of the
      project grants roles on its <Link to={`/projects/${projectId}/members`}>Members</Link> page.
    </p>
  );
}

/**
 * Controls the person's role may not use: shown, never hidden, with every one of them disabled (a
 * disabled fieldset) and the reason in its title and in the note above it (docs/console.md).
 */
export function RoleControls({ projectId, needed = 'operator', what, children }: { projectId: string; needed?: Role; what?: string; children: ReactNode }) {
  return (
    <>
      <ReadOnlyNote projectId={projectId} needed={needed} what={what} />
      <RoleFieldset projectId={projectId} needed={needed}>
        {children}
      </RoleFieldset>
    </>
  );
}

/** The controls alone, disabled together with the reason in their title, where a note is already on the page. */
export function RoleFieldset({ projectId, needed = 'operator', inline, children }: { projectId: string; needed?: Role; inline?: boolean; children: ReactNode }) {
  const role = useProjectRole(projectId);
  const allowed = roleAllows(role, needed);
  return (
    <fieldset className={inline ? 'bare inline' : 'bare'} disabled={!allowed} title={allowed ? undefined : roleReason(role, needed)} data-testid={allowed ? undefined : 'disabled-controls'}>
      {children}
    </fieldset>
  );
}
