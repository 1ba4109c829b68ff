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
  /** The groups the person's last single sign-on carried (sign-in or confirmation); empty without one. */
  signInGroups: string[];
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
  /**
   * Who made it: a project token acts with at most its maker's role in the project now, and the
   * maker's removal revokes it. Empty for tokens made before makers were recorded (counted as the
   * owner's) and for device tokens.
   */
  createdBy: string;
  /** After this it is refused as if revoked; null: it does not expire. */
  expiresAt: Date | null;
  /**
   * A personal token made in a single sign-on session: the identity provider is asked again, as for
   * the session, and the token stops for good when it no longer vouches for the person.
   */
  signIn: TokenSignIn | null;
  projectId: string;
  /** Device tokens: the device's UUID and its own device_id string. */
  deviceUuid: string;
  deviceId: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface TokenSignIn {
  refreshToken: string;
  /** When the provider is asked next. */
  confirmAt: Date;
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
  signIn?: { refreshToken: string; groups: string[]; confirmAt: Date; idToken: string };
  userId: string;
  /** Sent back by the console in `x-csrf-token` on every mutating call. */
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * A role offered to an e-mail address (docs/api.md, "Invitations"): it becomes a grant when the
 * person with that address accepts it, so that no project appears in anyone's list unasked, and a
 * grant reveals nothing of who is registered.
 */
export interface Invitation {
  projectId: string;
  /** Lowercased. */
  email: string;
  role: Role;
  invitedAt: Date;
  /** Who invited: a user id, or a project token's id. */
  invitedBy: string;
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
