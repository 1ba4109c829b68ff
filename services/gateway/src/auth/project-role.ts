import { unauthenticated } from '@ota/errors';
import type { AccountStore } from './ports';
import type { Principal } from './principal';
import { ROLES, type Role } from './roles';

/** Why a caller holds its role in a project, for the audit and the console. */
export type RoleSource = 'owner' | 'grant' | 'token' | 'staff';

export interface ProjectRole {
  role: Role;
  source: RoleSource;
}

type RoleStore = Pick<AccountStore, 'grantsTo' | 'findUser'>;

/**
 * The caller's role in the project (docs/api.md, "Roles"), or null when it has none (the project
 * is then 404 to it). The owner is an admin; a person holds the highest role granted to them or to
 * a group of their sign-in; staff who hold no grant read every project, as viewers. A project
 * token of `api` scope holds its own role, but never more than its maker holds now (docs/security.md,
 * "Tokens outlive no one"): one whose maker holds nothing there any more is refused (401).
 */
export async function projectRoleOf(store: RoleStore, principal: Principal, project: { id: string; ownerId: string }): Promise<ProjectRole | null> {
  const { token } = principal;
  if (token.kind === 'project') {
    if (token.projectId !== project.id || !token.role) return null;
    const maker = await makerRoleOf(store, token.createdBy, project);
    if (!maker) throw unauthenticated('the person who made this token no longer holds a role in its project, so the token is disarmed; ask an admin for a new one');
    return { role: lowerOf(token.role, maker), source: 'token' };
  }
  if (token.kind !== 'personal') return null;
  if (project.ownerId === principal.userId) return { role: 'admin', source: 'owner' };
  const granted = await grantedRole(store, principal.userId, principal.groups ?? [], project.id);
  if (granted) return { role: granted, source: 'grant' };
  return principal.isStaff ? { role: 'viewer', source: 'staff' } : null;
}

/**
 * What a token's maker holds in the project now: the owner an admin, anyone else their grants, to
 * them and to the groups of their latest single sign-on. A token made before makers were recorded
 * counts as the owner's.
 */
async function makerRoleOf(store: RoleStore, makerId: string, project: { id: string; ownerId: string }): Promise<Role | null> {
  if (makerId === '' || makerId === project.ownerId) return 'admin';
  const maker = await store.findUser(makerId);
  return maker ? grantedRole(store, maker.id, maker.signInGroups, project.id) : null;
}

/** The highest role granted in the project to the person or to any of the groups. */
async function grantedRole(store: RoleStore, userId: string, groups: readonly string[], projectId: string): Promise<Role | null> {
  const roles = (await store.grantsTo(userId, groups)).filter((grant) => grant.projectId === projectId).map((grant) => grant.role);
  return roles.sort((a, b) => ROLES.indexOf(b) - ROLES.indexOf(a))[0] ?? null;
}

function lowerOf(a: Role, b: Role): Role {
  return ROLES.indexOf(a) <= ROLES.indexOf(b) ? a : b;
}
