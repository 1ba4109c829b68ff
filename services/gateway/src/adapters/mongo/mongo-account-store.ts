import { randomUUID } from 'node:crypto';
import { alreadyExists, notFound } from '@ota/errors';
import { collectionOf, insertUnique } from '@ota/mongo';
import { hashToken, newRawToken, newSessionSecret, prefixOf } from '../../auth/tokens';
import type { Invitation, Plan, RoleGrant, Session, Token, User } from '../../auth/model';
import { isRole } from '../../auth/roles';
import type { AccountStore, NewToken, SignInAttempt } from '../../auth/ports';
import type { GatewayModels, InvitationDoc, PlanDoc, RoleGrantDoc, SessionDoc, SignInAttemptDoc, TokenDoc, UserDoc } from './models';

// last_used_at is written at most this often per token, so that a polling fleet does not turn
// every check into a write.
const LAST_USED_RESOLUTION_MS = 60_000;

/** The gateway's own data in MongoDB: users, their plans, tokens of every kind, console sessions. */
export class MongoAccountStore implements AccountStore {
  /** When this replica last wrote each token's usage: at most one write per token per resolution. */
  private readonly usageWritten = new Map<string, number>();
  private readonly usageSweeper: NodeJS.Timeout;

  constructor(private readonly models: GatewayModels) {
    // Forget what is older than the resolution: the map holds only tokens used within the last minute.
    this.usageSweeper = setInterval(() => {
      const cutoff = Date.now() - LAST_USED_RESOLUTION_MS;
      for (const [id, at] of this.usageWritten) if (at < cutoff) this.usageWritten.delete(id);
    }, LAST_USED_RESOLUTION_MS);
    this.usageSweeper.unref();
  }

  async createUser(email: string, isStaff: boolean, plan: Plan): Promise<User> {
    const user: UserDoc = { _id: randomUUID(), email: email.toLowerCase(), is_staff: isStaff, plan: planDocOf(plan), created_at: new Date() };
    if (!(await insertUnique(collectionOf(this.models.User), user))) throw alreadyExists(`a user with e-mail ${email} already exists`);
    return userOf(user);
  }

  async setPlan(email: string, plan: Partial<Plan>): Promise<User> {
    const set: Record<string, number> = {};
    if (plan.maxDevices !== undefined) set['plan.max_devices'] = plan.maxDevices;
    if (plan.maxUploadsPerMonth !== undefined) set['plan.max_uploads_per_month'] = plan.maxUploadsPerMonth;
    const user = await collectionOf(this.models.User).findOneAndUpdate(
      { email: email.toLowerCase() },
      { $set: set },
      { returnDocument: 'after' },
    );
    if (!user) throw notFound(`no user with e-mail ${email}`);
    return userOf(user as unknown as UserDoc);
  }

  async findUser(id: string): Promise<User | null> {
    const doc = await this.models.User.findById(id).lean<UserDoc>().exec();
    return doc && userOf(doc);
  }

  async findUserByEmail(email: string): Promise<User | null> {
    const doc = await this.models.User.findOne({ email: email.toLowerCase() }).lean<UserDoc>().exec();
    return doc && userOf(doc);
  }

  async setSignInGroups(userId: string, groups: readonly string[]): Promise<void> {
    await collectionOf(this.models.User).updateOne({ _id: userId }, { $set: { sign_in_groups: [...groups] } });
  }

  async createToken(input: NewToken): Promise<{ token: Token; raw: string }> {
    const raw = newRawToken(input.kind);
    const token: TokenDoc = {
      _id: hashToken(raw),
      id: randomUUID(),
      prefix: prefixOf(raw),
      kind: input.kind,
      scope: input.scope,
      role: input.role,
      name: input.name,
      user_id: input.userId,
      project_id: input.projectId,
      device_uuid: input.deviceUuid,
      device_id: input.deviceId,
      created_by: input.createdBy,
      expires_at: input.expiresAt,
      sign_in: input.signIn && { refresh_token: input.signIn.refreshToken, confirm_at: input.signIn.confirmAt },
      created_at: new Date(),
      last_used_at: null,
      revoked_at: null,
    };
    await collectionOf(this.models.Token).insertOne(token);
    return { token: tokenOf(token), raw };
  }

  /**
   * One primary-key read of the hash, no cache: a revoked token stops working on the very next request.
   */
  authenticate(raw: string): Promise<Token | null> {
    return this.authenticateHash(hashToken(raw));
  }

  /** `authenticate` for a token known by its hash (a console session's token). */
  async authenticateHash(tokenHash: string): Promise<Token | null> {
    // Every request makes this read: the driver's collection, without building a mongoose query.
    const token = (await collectionOf(this.models.Token).findOne({ _id: tokenHash })) as TokenDoc | null;
    if (!token || token.revoked_at || (token.expires_at && token.expires_at.getTime() <= Date.now())) return null;
    const now = Date.now();
    const written = this.usageWritten.get(token._id);
    if (written === undefined || now - written > LAST_USED_RESOLUTION_MS) {
      this.usageWritten.set(token._id, now);
      // Off the request path: the answer does not wait for the bookkeeping write. Two replicas
      // upserting at once may collide on the key; either time will do.
      void collectionOf(this.models.TokenUsage)
        .updateOne({ _id: token._id }, { $set: { last_used_at: new Date(now) } }, { upsert: true })
        .catch(() => undefined);
    }
    return tokenOf(token);
  }

  /** Opens a console session for a personal token; the raw session id is returned once, for the cookie. */
  createSession(token: Token, ttlSeconds: number): Promise<{ session: Session; raw: string }> {
    return this.openSession(token.userId, token.hash, null, ttlSeconds);
  }

  createSignInSession(userId: string, signIn: NonNullable<Session['signIn']>, ttlSeconds: number): Promise<{ session: Session; raw: string }> {
    return this.openSession(userId, '', signInDocOf(signIn), ttlSeconds);
  }

  async updateSessionSignIn(hash: string, signIn: NonNullable<Session['signIn']>): Promise<void> {
    await collectionOf(this.models.Session).updateOne({ _id: hash }, { $set: { sign_in: signInDocOf(signIn) } });
  }

  async saveSignInAttempt(attempt: SignInAttempt): Promise<void> {
    // Attempts never finished are deleted here, an hour on: no TTL index on FerretDB.
    await this.models.SignInAttempt.deleteMany({ created_at: { $lt: new Date(Date.now() - 3_600_000) } });
    await collectionOf(this.models.SignInAttempt).insertOne({ _id: attempt.state, nonce: attempt.nonce, code_verifier: attempt.codeVerifier, created_at: attempt.createdAt });
  }

  async takeSignInAttempt(state: string, maxAgeSeconds: number): Promise<SignInAttempt | null> {
    // Read, then deleted: only the request whose delete removed it has it, so a state serves one
    // way back however often, and however concurrently, it is sent (as takeInvitation).
    const doc = await this.models.SignInAttempt.findById(state).lean<SignInAttemptDoc>();
    if (!doc || (await collectionOf(this.models.SignInAttempt).deleteOne({ _id: state })).deletedCount !== 1) return null;
    if (doc.created_at.getTime() < Date.now() - maxAgeSeconds * 1000) return null;
    return { state: doc._id, nonce: doc.nonce, codeVerifier: doc.code_verifier, createdAt: doc.created_at };
  }

  private async openSession(userId: string, tokenHash: string, signIn: SessionDoc['sign_in'], ttlSeconds: number): Promise<{ session: Session; raw: string }> {
    const now = new Date();
    // Sessions past their expiry are deleted here, at sign-in, and when presented: no TTL index on FerretDB.
    await this.models.Session.deleteMany({ expires_at: { $lt: now } });
    const raw = newSessionSecret();
    const session: SessionDoc = {
      _id: hashToken(raw),
      token_hash: tokenHash,
      user_id: userId,
      sign_in: signIn,
      csrf_token: newSessionSecret(),
      created_at: now,
      expires_at: new Date(now.getTime() + ttlSeconds * 1000),
    };
    await collectionOf(this.models.Session).insertOne(session);
    return { session: sessionOf(session), raw };
  }

  /** The live session for a raw session id: one primary-key read; an expired one is deleted and not returned. */
  async findSession(raw: string): Promise<Session | null> {
    const doc = await this.models.Session.findById(hashToken(raw)).lean<SessionDoc>();
    if (!doc) return null;
    if (doc.expires_at.getTime() <= Date.now()) {
      await this.deleteSession(doc._id);
      return null;
    }
    return sessionOf(doc);
  }

  /** Ends the session whose hash this is. */
  async deleteSession(hash: string): Promise<void> {
    await this.models.Session.deleteOne({ _id: hash });
  }

  async listTokens(filter: { userId: string; kind: 'personal' } | { projectId: string; kind: 'project' }): Promise<Token[]> {
    const query = 'userId' in filter ? { user_id: filter.userId, kind: filter.kind } : { project_id: filter.projectId, kind: filter.kind };
    return this.withUsage(await this.models.Token.find(query).sort({ created_at: 1, _id: 1 }).lean<TokenDoc[]>().exec());
  }

  async findToken(id: string): Promise<Token | null> {
    const token = await this.models.Token.findOne({ id }).lean<TokenDoc>().exec();
    return token ? (await this.withUsage([token]))[0]! : null;
  }

  /**
   * The tokens with `last_used_at` from their usage records (older versions kept it on the token).
   * One read by `_id` per token: FerretDB answers an `_id` list by reading the whole collection
   * (1.1 s at 50,000 records, where one `_id` takes 5 ms), and a download asks this of its token.
   */
  private async withUsage(tokens: TokenDoc[]): Promise<Token[]> {
    const usage = await Promise.all(tokens.map((token) => this.models.TokenUsage.findById(token._id).lean()));
    return tokens.map((token, index) => tokenOf({ ...token, last_used_at: usage[index]?.last_used_at ?? token.last_used_at }));
  }

  /** Revocation keeps the record, so last_used_at stays readable afterwards. */
  async revokeToken(token: Token): Promise<void> {
    await collectionOf(this.models.Token).updateOne({ _id: token.hash }, { $set: { revoked_at: new Date() } });
  }

  async revokeTokensMadeBy(projectId: string, userId: string): Promise<number> {
    const result = await collectionOf(this.models.Token).updateMany({ project_id: projectId, kind: 'project', scope: 'api', created_by: userId, revoked_at: null }, { $set: { revoked_at: new Date() } });
    return result.modifiedCount;
  }

  async updateTokenSignIn(hash: string, signIn: NonNullable<Token['signIn']>): Promise<void> {
    await collectionOf(this.models.Token).updateOne({ _id: hash }, { $set: { sign_in: { refresh_token: signIn.refreshToken, confirm_at: signIn.confirmAt } } });
  }

  /** Every project and device token of the project: used when the project is deleted. */
  async revokeProjectTokens(projectId: string): Promise<void> {
    await collectionOf(this.models.Token).updateMany(
      { project_id: projectId, kind: { $in: ['project', 'device'] }, revoked_at: null },
      { $set: { revoked_at: new Date() } },
    );
  }

  async revokeDeviceTokens(deviceUuid: string): Promise<number> {
    const result = await collectionOf(this.models.Token).updateMany(
      { kind: 'device', device_uuid: deviceUuid, revoked_at: null },
      { $set: { revoked_at: new Date() } },
    );
    return result.modifiedCount;
  }

  async grantRole(grant: RoleGrant): Promise<void> {
    const doc = grantDocOf(grant);
    await collectionOf(this.models.RoleGrant).replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  async revokeRole(projectId: string, subject: RoleGrant['subject']): Promise<boolean> {
    const { deletedCount } = await collectionOf(this.models.RoleGrant).deleteOne({ _id: grantIdOf(projectId, subject) });
    return deletedCount > 0;
  }

  async listGrants(projectId: string): Promise<RoleGrant[]> {
    const docs = await this.models.RoleGrant.find({ project_id: projectId }).lean<RoleGrantDoc[]>().exec();
    return docs.map(grantOf).sort((a, b) => a.subject.kind.localeCompare(b.subject.kind) * -1 || a.grantedAt.getTime() - b.grantedAt.getTime());
  }

  async grantsTo(userId: string, groups: readonly string[]): Promise<RoleGrant[]> {
    const docs = await this.models.RoleGrant.find({
      $or: [{ subject_kind: 'user', subject: userId }, ...(groups.length > 0 ? [{ subject_kind: 'group', subject: { $in: [...groups] } }] : [])],
    })
      .lean<RoleGrantDoc[]>()
      .exec();
    return docs.map(grantOf);
  }

  async deleteGrants(projectId: string): Promise<void> {
    await Promise.all([this.models.RoleGrant.deleteMany({ project_id: projectId }), this.models.Invitation.deleteMany({ project_id: projectId })]);
  }

  async saveInvitation(invitation: Invitation): Promise<void> {
    const doc: InvitationDoc = {
      _id: `${invitation.projectId}:${invitation.email}`,
      project_id: invitation.projectId,
      email: invitation.email,
      role: invitation.role,
      invited_at: invitation.invitedAt,
      invited_by: invitation.invitedBy,
    };
    await collectionOf(this.models.Invitation).replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  async listInvitations(projectId: string): Promise<Invitation[]> {
    return (await this.models.Invitation.find({ project_id: projectId }).sort({ invited_at: 1, _id: 1 }).lean<InvitationDoc[]>().exec()).map(invitationOf);
  }

  async invitationsTo(email: string): Promise<Invitation[]> {
    return (await this.models.Invitation.find({ email: email.toLowerCase() }).sort({ invited_at: 1, _id: 1 }).lean<InvitationDoc[]>().exec()).map(invitationOf);
  }

  async takeInvitation(projectId: string, email: string): Promise<Invitation | null> {
    // Read, then deleted: only the accept whose delete removed it has it, so two accepts at once
    // make one grant and one 404. FerretDB v1's find-and-delete is no such decision between two
    // clients (both may get the document); a delete's count is (the row goes once).
    const _id = `${projectId}:${email.toLowerCase()}`;
    const doc = await this.models.Invitation.findById(_id).lean<InvitationDoc>();
    if (!doc) return null;
    const { deletedCount } = await collectionOf(this.models.Invitation).deleteOne({ _id, invited_at: doc.invited_at });
    return deletedCount === 1 ? invitationOf(doc) : null;
  }

  async deleteInvitation(projectId: string, email: string): Promise<boolean> {
    const { deletedCount } = await collectionOf(this.models.Invitation).deleteOne({ _id: `${projectId}:${email.toLowerCase()}` });
    return deletedCount > 0;
  }

  async usersInGroup(group: string): Promise<User[]> {
    return (await this.models.User.find({ sign_in_groups: group }).sort({ email: 1 }).limit(1000).lean<UserDoc[]>().exec()).map(userOf);
  }
}

function planDocOf(plan: Plan): PlanDoc {
  return { max_devices: plan.maxDevices, max_uploads_per_month: plan.maxUploadsPerMonth };
}

function userOf(doc: UserDoc): User {
  const plan = { maxDevices: doc.plan.max_devices, maxUploadsPerMonth: doc.plan.max_uploads_per_month };
  return { id: doc._id, email: doc.email, isStaff: doc.is_staff, plan, createdAt: doc.created_at, signInGroups: doc.sign_in_groups ?? [] };
}

function tokenOf(doc: TokenDoc): Token {
  return {
    hash: doc._id,
    id: doc.id,
    prefix: doc.prefix,
    kind: doc.kind,
    scope: doc.scope,
    // A project token of `api` scope made before roles keeps its power: admin.
    role: doc.kind === 'project' && doc.scope === 'api' ? (isRole(doc.role) ? doc.role : 'admin') : null,
    name: doc.name,
    userId: doc.user_id,
    projectId: doc.project_id,
    deviceUuid: doc.device_uuid,
    deviceId: doc.device_id,
    createdBy: doc.created_by ?? '',
    expiresAt: doc.expires_at ?? null,
    signIn: doc.sign_in ? { refreshToken: doc.sign_in.refresh_token, confirmAt: new Date(doc.sign_in.confirm_at) } : null,
    createdAt: doc.created_at,
    lastUsedAt: doc.last_used_at,
    revokedAt: doc.revoked_at,
  };
}

function sessionOf(doc: SessionDoc): Session {
  const signIn = doc.sign_in
    ? { refreshToken: doc.sign_in.refresh_token, groups: doc.sign_in.groups, confirmAt: new Date(doc.sign_in.confirm_at), idToken: doc.sign_in.id_token ?? '' }
    : undefined;
  return { hash: doc._id, tokenHash: doc.token_hash, userId: doc.user_id, csrfToken: doc.csrf_token, createdAt: doc.created_at, expiresAt: doc.expires_at, ...(signIn ? { signIn } : {}) };
}

function signInDocOf(signIn: NonNullable<Session['signIn']>): NonNullable<SessionDoc['sign_in']> {
  return { refresh_token: signIn.refreshToken, groups: signIn.groups, confirm_at: signIn.confirmAt, id_token: signIn.idToken };
}

function grantIdOf(projectId: string, subject: RoleGrant['subject']): string {
  return subject.kind === 'user' ? `${projectId}:user:${subject.userId}` : `${projectId}:group:${subject.group}`;
}

function grantDocOf(grant: RoleGrant): RoleGrantDoc {
  return {
    _id: grantIdOf(grant.projectId, grant.subject),
    project_id: grant.projectId,
    subject_kind: grant.subject.kind,
    subject: grant.subject.kind === 'user' ? grant.subject.userId : grant.subject.group,
    role: grant.role,
    granted_at: grant.grantedAt,
    granted_by: grant.grantedBy,
  };
}

function invitationOf(doc: InvitationDoc): Invitation {
  return { projectId: doc.project_id, email: doc.email, role: isRole(doc.role) ? doc.role : 'viewer', invitedAt: doc.invited_at, invitedBy: doc.invited_by };
}

function grantOf(doc: RoleGrantDoc): RoleGrant {
  return {
    projectId: doc.project_id,
    subject: doc.subject_kind === 'user' ? { kind: 'user', userId: doc.subject } : { kind: 'group', group: doc.subject },
    // Only roles are stored; anything else would be a bug's, and grants the least.
    role: isRole(doc.role) ? doc.role : 'viewer',
    grantedAt: doc.granted_at,
    grantedBy: doc.granted_by,
  };
}
