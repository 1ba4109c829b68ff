import { randomUUID } from 'node:crypto';
import { isDomainError } from '@ota/errors';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { eventually, testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { MongoAccountStore } from '../src/adapters/mongo/mongo-account-store';
import { registerGatewayModels, type GatewayModels } from '../src/adapters/mongo/models';

// The gateway's Mongo adapter alone, against the run's real MongoDB-protocol server (FerretDB
// here), in a database of its own: what it stores comes back as auth's model, and never as a document.

let mongo: Connection;
let models: GatewayModels;
let store: MongoAccountStore;
const plan = { maxDevices: 10, maxUploadsPerMonth: 50 };

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_gateway_${randomUUID().slice(0, 8)}` });
  models = registerGatewayModels(mongo);
  await ensureIndexes(mongo);
  store = new MongoAccountStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

describe('users', () => {
  it('are found by id and by e-mail in any case, with their plan; a second user with the e-mail is refused', async () => {
    const user = await store.createUser('Store.User@Example.com', false, plan);
    expect(user).toEqual({ id: expect.any(String), email: 'store.user@example.com', isStaff: false, plan, createdAt: expect.any(Date), signInGroups: [] });
    expect(await store.findUser(user.id)).toEqual(user);
    expect(await store.findUserByEmail('STORE.USER@example.com')).toEqual(user);
    expect(await store.findUser(randomUUID())).toBeNull();

    const refusal = await store.createUser('store.user@example.com', true, plan).catch((error: unknown) => error);
    expect(isDomainError(refusal) && refusal.kind).toBe('AlreadyExists');
  });

  it('get a plan changed field by field, stored in the document as the admin command has always written it', async () => {
    const user = await store.createUser(`plan-${randomUUID().slice(0, 6)}@example.com`, false, plan);
    const changed = await store.setPlan(user.email, { maxDevices: 3 });
    expect(changed.plan).toEqual({ maxDevices: 3, maxUploadsPerMonth: 50 });
    const doc = await models.User.findById(user.id).lean();
    expect(doc!.plan).toEqual({ max_devices: 3, max_uploads_per_month: 50 });
  });
});

describe('tokens', () => {
  const newToken = (overrides: Partial<Parameters<MongoAccountStore['createToken']>[0]> = {}) =>
    store.createToken({ kind: 'device', scope: '', role: null, name: 'device unit-1', userId: 'owner-1', projectId: 'p1', deviceUuid: randomUUID(), deviceId: 'unit-1', createdBy: '', expiresAt: null, signIn: null, ...overrides });

  it('authenticate by the raw token, which is stored only as its hash, until revoked', async () => {
    const { token, raw } = await newToken();
    expect(raw).toMatch(/^ota_dev_/);
    expect(token).toMatchObject({ kind: 'device', projectId: 'p1', deviceId: 'unit-1', prefix: raw.slice(0, 12), revokedAt: null });
    expect(await models.Token.findById(token.hash).lean()).not.toBeNull();
    expect(await models.Token.countDocuments({ _id: raw })).toBe(0);

    expect(await store.authenticate(raw)).toMatchObject({ id: token.id, hash: token.hash, userId: 'owner-1' });
    await store.revokeToken(token);
    expect(await store.authenticate(raw)).toBeNull();
    // Revocation keeps the record, with when it was last used (written off the request path).
    const found = await eventually(
      () => store.findToken(token.id),
      (candidate) => candidate?.lastUsedAt instanceof Date,
    );
    expect(found!.revokedAt).toBeInstanceOf(Date);
    expect(found!.lastUsedAt).toBeInstanceOf(Date);
  });

  it("of a device are revoked together, and a project's with the project", async () => {
    const deviceUuid = randomUUID();
    const first = await newToken({ deviceUuid });
    const second = await newToken({ deviceUuid });
    expect(await store.revokeDeviceTokens(deviceUuid)).toBe(2);
    expect(await store.authenticate(first.raw)).toBeNull();
    expect(await store.authenticate(second.raw)).toBeNull();

    const project = await newToken({ kind: 'project', scope: 'api', projectId: 'p-gone', deviceUuid: '', deviceId: '' });
    const personal = await newToken({ kind: 'personal', projectId: '', deviceUuid: '', deviceId: '' });
    await store.revokeProjectTokens('p-gone');
    expect(await store.authenticate(project.raw)).toBeNull();
    expect(await store.authenticate(personal.raw)).not.toBeNull();
    expect((await store.listTokens({ projectId: 'p-gone', kind: 'project' })).map((token) => token.id)).toEqual([project.token.id]);
  });

  it('stop at their expiry, and those a person made in a project are revoked together', async () => {
    const expiring = await newToken({ kind: 'personal', projectId: '', deviceUuid: '', deviceId: '', expiresAt: new Date(Date.now() + 60_000) });
    const expired = await newToken({ kind: 'personal', projectId: '', deviceUuid: '', deviceId: '', expiresAt: new Date(Date.now() - 1) });
    expect(await store.authenticate(expiring.raw)).toMatchObject({ expiresAt: expiring.token.expiresAt });
    expect(await store.authenticate(expired.raw)).toBeNull();

    const made = await newToken({ kind: 'project', scope: 'api', role: 'operator', projectId: 'p-made', deviceUuid: '', deviceId: '', createdBy: 'maker-1' });
    const others = await newToken({ kind: 'project', scope: 'api', role: 'operator', projectId: 'p-made', deviceUuid: '', deviceId: '', createdBy: 'maker-2' });
    expect(await store.revokeTokensMadeBy('p-made', 'maker-1')).toBe(1);
    expect(await store.authenticate(made.raw)).toBeNull();
    expect(await store.authenticate(others.raw)).toMatchObject({ createdBy: 'maker-2', role: 'operator' });
  });
});

describe('sessions', () => {
  it('are found by the raw id the cookie holds and act for their token; an expired one is deleted when presented', async () => {
    const { token } = await store.createToken({ kind: 'personal', scope: '', role: null, name: 'pat', userId: 'user-9', projectId: '', deviceUuid: '', deviceId: '', createdBy: 'user-9', expiresAt: null, signIn: null });
    const { session, raw } = await store.createSession(token, 60);
    expect(session).toMatchObject({ tokenHash: token.hash, userId: 'user-9', csrfToken: expect.any(String) });
    expect(await store.findSession(raw)).toEqual(session);

    const expired = await store.createSession(token, -1);
    expect(await store.findSession(expired.raw)).toBeNull();
    expect(await models.Session.findById(expired.session.hash).lean()).toBeNull();

    await store.deleteSession(session.hash);
    expect(await store.findSession(raw)).toBeNull();
  });
});
