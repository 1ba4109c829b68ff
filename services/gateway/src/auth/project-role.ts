import type { AccountStore } from './ports';
import type { Principal } from './principal';
import { ROLES, type Role } from './roles';

/** Why a caller holds its role in a project, for the audit and the console. */
export type RoleSource = 'owner' | 'grant' | 'token' | 'staff';

export interface ProjectRole {
  role: Role;
  source: RoleSource;
}

/**
 * The caller's role in the project (docs/api.md, "Roles"), or null when it has none (the project
 * is then 404 to it). The owner is an admin; a project token of `api` scope holds its own role;
 * a person holds the highest role granted to them or to a group of their sign-in; staff who hold
 * no grant read every project, as viewers.
 */
export async function projectRoleOf(store: Pick<AccountStore, 'grantsTo'>, principal: Principal, project: { id: string; ownerId: string }): Promise<ProjectRole | null> {
  const { token } = principal;
  if (token.kind === 'project') return token.projectId === project.id && token.role ? { role: token.role, source: 'token' } : null;
  if (token.kind !== 'personal') return null;
  if (project.ownerId === principal.userId) return { role: 'admin', source: 'owner' };
  const granted = (await store.grantsTo(principal.userId, principal.groups ?? []))
    .filter((grant) => grant.projectId === project.id)
    .map((grant) => grant.role)
    .sort((a, b) => ROLES.indexOf(b) - ROLES.indexOf(a))[0];
  if (granted) return { role: granted, source: 'grant' };
  return principal.isStaff ? { role: 'viewer', source: 'staff' } : null;
}
