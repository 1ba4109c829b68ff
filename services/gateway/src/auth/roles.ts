import { permissionDenied } from '@ota/errors';

/**
 * What a person or a token may do in a project (docs/api.md, "Roles"), each role all that the one
 * before it may and more: a viewer reads; an operator changes devices, groups, channels, builds,
 * deployments and webhooks (pausing included); an approver also resumes what a guardrail paused,
 * passes a staged plan's approval gates and goes around the holds on a build; an admin also manages tokens, signing keys, members and the project
 * itself. The project's owner is an admin.
 */
export const ROLES = ['viewer', 'operator', 'approver', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** What each role adds, in the words the API and the console show. */
export const ROLE_POWERS: Record<Role, string> = {
  viewer: 'reads the project',
  operator: 'changes devices, groups, channels, builds, deployments and webhooks',
  approver: 'also resumes guardrail pauses, passes approval gates and goes around holds on a build',
  admin: 'also manages tokens, signing keys, members and the project',
};

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Whether `held` may do what needs `needed`. */
export function roleAllows(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}

/**
 * The one role check of the gateway: the operation table makes it for every operation in a
 * project, and the deployment transition for an approval gate. A refusal is 403 and names the
 * role needed.
 */
export function requireRole(held: Role, needed: Role, what: string): void {
  if (!roleAllows(held, needed)) throw permissionDenied(`${what} needs the ${needed} role in this project; the caller's role is ${held}`);
}
