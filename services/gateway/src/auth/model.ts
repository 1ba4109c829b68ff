import type { Role } from './roles';
import type { TokenKind } from './tokens';

/** The caps of a user's plan, counted against everything the user's projects hold. */
export interface Plan {
  maxDevices: number;
  maxUploadsPerMonth: number;
}

export interface User {
  id: string;
  /** Lowercased. */
  email: string;
  isStaff: boolean;
  plan: Plan;
  createdAt: Date;
}

export interface Token {
  /** SHA-256 hex of the raw token: the raw token itself is never stored. */
  hash: string;
  /** The token's public id, shown in the API. */
  id: string;
  prefix: string;
  kind: TokenKind;
  /** Project tokens: `api` or `device`. Empty for the other kinds. */
  scope: string;
  /** What an `api`-scope project token may do in its project; tokens made before roles are admins. Null for the other kinds. */
  role: Role | null;
  name: string;
  /** The user the token acts for: the personal token's user, or the owner of the token's project. */
  userId: string;
  projectId: string;
  /** Device tokens: the device's UUID and its own device_id string. */
  deviceUuid: string;
  deviceId: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/**
 * A console sign-in: acting with the personal token it was opened with, or, signed in through the
 * identity provider, with the person's own rights and the groups the provider gives them.
 */
export interface Session {
  /** SHA-256 hex of the raw session id, which only the browser's cookie holds. */
  hash: string;
  /** The hash of the personal token the session was opened with; empty for a single sign-on. */
  tokenHash: string;
  /** A single sign-on's: what asks the provider again, the groups it gave, and when to ask next. */
  signIn?: { refreshToken: string; groups: string[]; confirmAt: Date };
  userId: string;
  /** Sent back by the console in `x-csrf-token` on every mutating call. */
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * A role granted in a project (docs/api.md, "Roles"): to one person, or to everyone whose sign-in
 * carries a group. A person holds the highest of their grants; the owner is an admin without one.
 */
export interface RoleGrant {
  projectId: string;
  subject: { kind: 'user'; userId: string } | { kind: 'group'; group: string };
  role: Role;
  grantedAt: Date;
  /** Who granted it: a user id, or a project token's id. */
  grantedBy: string;
}
