import { Schema, type Connection } from 'mongoose';
import type { TokenKind } from '../../auth/tokens';

export interface PlanDoc {
  max_devices: number;
  max_uploads_per_month: number;
}

export interface UserDoc {
  _id: string;
  email: string;
  is_staff: boolean;
  plan: PlanDoc;
  created_at: Date;
  /** The groups of the person's latest single sign-on; absent before one. */
  sign_in_groups?: string[];
}

export interface TokenDoc {
  /**
   * SHA-256 hex of the raw token; the raw token itself is never stored. The hash is the primary
   * key so that authentication, on every request, is one primary-key read (docs/architecture.md,
   * "Where the data-access rules come from").
   */
  _id: string;
  /** The token's public id, shown in the API. */
  id: string;
  prefix: string;
  kind: TokenKind;
  /** Project tokens: `api` or `device`. Empty for the other kinds. */
  scope: string;
  /** `api`-scope project tokens: their role (absent from tokens made before roles: admin). */
  role?: string | null;
  name: string;
  /** The user the token acts for: the PAT's user, or the owner of the token's project. */
  user_id: string;
  project_id: string;
  /** Device tokens: the device's UUID and its own device_id string. */
  device_uuid: string;
  device_id: string;
  /** Who made it; absent from tokens made before makers were recorded. */
  created_by?: string;
  /** Absent or null: it does not expire. */
  expires_at?: Date | null;
  /** A token made in a single sign-on session: its refresh token and next confirmation. */
  sign_in?: { refresh_token: string; confirm_at: Date } | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** A role granted in a project, to a person or to a group of the sign-in (RoleGrant). */
export interface InvitationDoc {
  /** `<project>:<e-mail>`: one invitation per address and project. */
  _id: string;
  project_id: string;
  email: string;
  role: string;
  invited_at: Date;
  invited_by: string;
}

export interface RoleGrantDoc {
  /** `<project>:user:<user id>` or `<project>:group:<group>`: one grant per subject and project. */
  _id: string;
  project_id: string;
  subject_kind: 'user' | 'group';
  /** The user id or the group's name. */
  subject: string;
  role: string;
  granted_at: Date;
  granted_by: string;
}

/**
 * When a token was last used, apart from the token itself: FerretDB v1 runs an update as
 * read-then-write of the whole document, so a usage write racing a revocation on the token's own
 * document could undo the revocation. Keyed by the token's hash, like the token.
 */
export interface TokenUsageDoc {
  _id: string;
  last_used_at: Date;
}

/**
 * An audit event that could not be stored in JetStream when its mutation was acknowledged (NATS
 * away or slow); the outbox relay publishes it later and deletes it (see ../audit.ts).
 */
export interface AuditOutboxDoc {
  /** The audit event's id, which is also its JetStream message id. */
  _id: string;
  /** The event as it travels on the bus (its JSON), so that the outbox of an earlier release reads the same. */
  event: unknown;
  created_at: Date;
}

/**
 * A console sign-in: the browser holds the raw session id in an HttpOnly cookie; only its SHA-256
 * is stored. It acts with the personal token it was opened with, so revoking that token ends it.
 */
/** A sign-in through the identity provider between the redirect there and the way back; `_id` is its state. */
export interface SignInAttemptDoc {
  _id: string;
  nonce: string;
  code_verifier: string;
  created_at: Date;
}

export interface SessionDoc {
  /** SHA-256 hex of the raw session id. */
  _id: string;
  /** The `_id` (hash) of the personal token the session was opened with; empty for a single sign-on. */
  token_hash: string;
  user_id: string;
  /** A single sign-on's refresh token, groups and next confirmation. */
  sign_in?: { refresh_token: string; groups: string[]; confirm_at: Date; id_token?: string } | null;
  /** Sent back by the console in `x-csrf-token` on every mutating call. */
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
}

const options = { versionKey: false as const, strict: 'throw' as const };

/**
 * One Idempotency-Key of an upload or a release: `_id` is `${project}:${operation}:${key}`, claimed
 * by an insert (atomic on FerretDB too) before the upload starts, and completed with the answer.
 */
export interface IdempotencyDoc {
  _id: string;
  state: 'in_progress' | 'done';
  /** SHA-256 of the request as received (manifest, the binary's SHA-256, other fields). */
  fingerprint: string;
  status: number;
  body: unknown;
  created_at: Date;
  expires_at: Date;
}

export function registerGatewayModels(connection: Connection) {
  const userSchema = new Schema<UserDoc>(
    {
      _id: String,
      email: { type: String, required: true },
      is_staff: Boolean,
      plan: { max_devices: Number, max_uploads_per_month: Number },
      created_at: Date,
      sign_in_groups: { type: [String], default: undefined },
    },
    options,
  );
  userSchema.index({ email: 1 }, { unique: true });

  const tokenSchema = new Schema<TokenDoc>(
    {
      _id: String,
      id: { type: String, required: true },
      prefix: String,
      kind: String,
      scope: String,
      role: { type: String, default: null },
      name: String,
      user_id: String,
      project_id: String,
      device_uuid: String,
      device_id: String,
      created_by: String,
      expires_at: { type: Date, default: null },
      sign_in: { type: Schema.Types.Mixed, default: null },
      created_at: Date,
      last_used_at: { type: Date, default: null },
      revoked_at: { type: Date, default: null },
    },
    options,
  );
  tokenSchema.index({ id: 1 }, { unique: true });
  tokenSchema.index({ user_id: 1, kind: 1 });
  tokenSchema.index({ project_id: 1, kind: 1 });

  const signInAttemptSchema = new Schema<SignInAttemptDoc>({ _id: String, nonce: String, code_verifier: String, created_at: Date }, options);
  signInAttemptSchema.index({ created_at: 1 });

  const roleGrantSchema = new Schema<RoleGrantDoc>(
    { _id: String, project_id: { type: String, required: true }, subject_kind: String, subject: String, role: String, granted_at: Date, granted_by: String },
    options,
  );
  roleGrantSchema.index({ project_id: 1 });
  const invitationSchema = new Schema<InvitationDoc>({ _id: String, project_id: { type: String, required: true }, email: String, role: String, invited_at: Date, invited_by: String }, options);
  invitationSchema.index({ project_id: 1 });
  invitationSchema.index({ email: 1 });
  userSchema.index({ sign_in_groups: 1 });
  roleGrantSchema.index({ subject_kind: 1, subject: 1 });

  const auditOutboxSchema = new Schema<AuditOutboxDoc>({ _id: String, event: Schema.Types.Mixed, created_at: Date }, options);
  auditOutboxSchema.index({ created_at: 1 });

  const sessionSchema = new Schema<SessionDoc>(
    { _id: String, token_hash: String, user_id: String, csrf_token: String, created_at: Date, expires_at: Date, sign_in: { type: Schema.Types.Mixed, default: null } },
    options,
  );
  sessionSchema.index({ expires_at: 1 });

  const idempotencySchema = new Schema<IdempotencyDoc>(
    { _id: String, state: String, fingerprint: String, status: Number, body: Schema.Types.Mixed, created_at: Date, expires_at: Date },
    options,
  );
  idempotencySchema.index({ expires_at: 1 });
  return {
    IdempotencyKey: connection.model<IdempotencyDoc>('IdempotencyKey', idempotencySchema, 'idempotency_keys'),
    User: connection.model<UserDoc>('User', userSchema, 'users'),
    Token: connection.model<TokenDoc>('Token', tokenSchema, 'tokens'),
    AuditOutbox: connection.model<AuditOutboxDoc>('AuditOutbox', auditOutboxSchema, 'audit_outbox'),
    TokenUsage: connection.model<TokenUsageDoc>('TokenUsage', new Schema<TokenUsageDoc>({ _id: String, last_used_at: Date }, options), 'token_usage'),
    Session: connection.model<SessionDoc>('Session', sessionSchema, 'sessions'),
    RoleGrant: connection.model<RoleGrantDoc>('RoleGrant', roleGrantSchema, 'role_grants'),
    Invitation: connection.model<InvitationDoc>('Invitation', invitationSchema, 'invitations'),
    SignInAttempt: connection.model<SignInAttemptDoc>('SignInAttempt', signInAttemptSchema, 'sign_in_attempts'),
  };
}

export type GatewayModels = ReturnType<typeof registerGatewayModels>;
