import { createHash } from 'node:crypto';
import mongoose from 'mongoose';
import { api, createUser, setupProject, startExtraGateway, testStack } from '@ota/testkit';

// The console's sign-in (docs/console.md) through the API, without a browser: the cookie's
// attributes, CSRF, expiry, sign-out and revocation, and refusals with a detail.

const session = (json: unknown, headers: Record<string, string> = {}) => api('POST', '/api/v1/session/', { json, headers });

function cookieOf(setCookie: string | null): { value: string; attributes: string[] } {
  const [pair = '', ...attributes] = (setCookie ?? '').split(';').map((part) => part.trim());
  return { value: pair.replace(/^ota_session=/, ''), attributes: attributes.map((attribute) => attribute.toLowerCase()) };
}

async function withGatewayDatabase<T>(use: (db: mongoose.mongo.Db) => Promise<T>): Promise<T> {
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    return await use(connection.getClient().db(String(testStack().gatewayEnv.MONGODB_DATABASE)));
  } finally {
    await connection.close();
  }
}

describe('the console session', () => {
  it('is an HttpOnly, SameSite=Strict cookie, Secure behind an HTTPS proxy the gateway trusts, stored only as a hash', async () => {
    const user = createUser();
    const plain = await session({ token: user.token });
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({ user: { id: user.user_id, email: user.email, is_staff: false }, token_prefix: user.token.slice(0, 12) });
    const cookie = cookieOf(plain.headers.get('set-cookie'));
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie.attributes).toEqual(expect.arrayContaining(['path=/', 'samesite=strict', 'httponly']));
    expect(cookie.attributes).not.toContain('secure');
    // X-Forwarded-Proto counts only from TRUSTED_PROXIES (the test stack trusts none; the security
    // suite shows an untrusted client cannot set it).
    const behindProxy = await startExtraGateway({ TRUSTED_PROXIES: '127.0.0.1' });
    try {
      const proxied = await api('POST', `${behindProxy.url}/api/v1/session/`, { json: { token: user.token }, headers: { 'x-forwarded-proto': 'https' } });
      expect(cookieOf(proxied.headers.get('set-cookie')).attributes).toContain('secure');
    } finally {
      await behindProxy.stop();
    }

    const stored = await withGatewayDatabase((db) => db.collection('sessions').findOne({ _id: createHash('sha256').update(cookie.value).digest('hex') } as never));
    expect(stored).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain(cookie.value);
    expect(JSON.stringify(stored)).not.toContain(user.token);
  });

  it('acts with its token for reads, and needs the CSRF token for every change', async () => {
    const user = createUser();
    const signedIn = await session({ token: user.token });
    const cookie = `ota_session=${cookieOf(signedIn.headers.get('set-cookie')).value}`;
    const csrf = signedIn.body.csrf_token as string;

    expect((await api('GET', '/api/v1/session/', { headers: { cookie } })).body.csrf_token).toBe(csrf);
    expect((await api('GET', '/api/v1/projects/', { headers: { cookie } })).status).toBe(200);
    const forged = await api('POST', '/api/v1/projects/', { headers: { cookie }, json: { name: 'forged' } });
    expect(forged.status).toBe(403);
    expect(forged.body.detail).toContain('x-csrf-token');
    expect((await api('POST', '/api/v1/projects/', { headers: { cookie, 'x-csrf-token': `${csrf}x` }, json: { name: 'forged' } })).status).toBe(403);
    expect((await api('GET', '/api/v1/projects/', { headers: { cookie } })).body).toEqual([]);
    const created = await api('POST', '/api/v1/projects/', { headers: { cookie, 'x-csrf-token': csrf }, json: { name: 'from the console' } });
    expect(created.status).toBe(201);
    // A bearer token is judged alone: another user's cookie beside it changes nothing.
    const other = createUser();
    expect((await api('GET', '/api/v1/projects/', { token: other.token, headers: { cookie } })).body).toEqual([]);

    expect((await api('DELETE', '/api/v1/session/', { headers: { cookie } })).status).toBe(403);
    expect((await api('DELETE', '/api/v1/session/', { headers: { cookie, 'x-csrf-token': csrf } })).status).toBe(204);
    const after = await api('GET', '/api/v1/projects/', { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(after.body.detail).toContain('sign in again');
  });

  it('ends when its token is revoked, and when it expires', async () => {
    const user = createUser();
    const extra = await api('POST', '/api/v1/me/tokens/', { token: user.token, json: { name: 'console' } });
    const signedIn = await session({ token: extra.body.token });
    const raw = cookieOf(signedIn.headers.get('set-cookie')).value;
    const cookie = `ota_session=${raw}`;
    expect((await api('GET', '/api/v1/projects/', { headers: { cookie } })).status).toBe(200);
    expect((await api('DELETE', `/api/v1/me/tokens/${extra.body.id}/`, { token: user.token })).status).toBe(204);
    expect((await api('GET', '/api/v1/projects/', { headers: { cookie } })).status).toBe(401);

    const second = await session({ token: user.token });
    const secondRaw = cookieOf(second.headers.get('set-cookie')).value;
    const id = createHash('sha256').update(secondRaw).digest('hex');
    await withGatewayDatabase((db) => db.collection('sessions').updateOne({ _id: id } as never, { $set: { expires_at: new Date(Date.now() - 1000) } }));
    const expired = await api('GET', '/api/v1/session/', { headers: { cookie: `ota_session=${secondRaw}` } });
    expect(expired.status).toBe(401);
    expect(await withGatewayDatabase((db) => db.collection('sessions').findOne({ _id: id } as never))).toBeNull();
  });

  it('refuses other tokens and malformed bodies with a detail', async () => {
    const f = await setupProject();
    for (const token of [f.apiToken, f.deviceScopeToken, 'ota_pat_no-such-token-0000000000000000000000000000']) {
      const refused = await session({ token });
      expect(refused.status).toBe(401);
      expect(typeof refused.body.detail).toBe('string');
    }
    const notAnObject = await api('POST', '/api/v1/session/', { body: '"AAA"', headers: { 'content-type': 'application/json' } });
    expect(notAnObject.status).toBe(400);
    expect(notAnObject.body.detail).toBe('body is not valid JSON');
    const unknownKey = await session({ token: f.user.token, remember_me: true });
    expect(unknownKey.status).toBe(422);
    expect(JSON.stringify(unknownKey.body.detail)).toContain('remember_me');
    expect((await api('GET', '/api/v1/session/', { token: f.user.token })).status).toBe(401);
  });
});
