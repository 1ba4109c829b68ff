import { api, KEYCLOAK_CLIENT as CLIENT, setupProject, signInThroughKeycloak, startExtraGateway, startKeycloak, type ExtraGateway, type Keycloak } from '@ota/testkit';
import { OpenIdProvider } from '../src/adapters/oidc/openid-provider';


// docs/operations.md, "Single sign-on", against a real Keycloak on loopback: the console signs a
// person in through the provider (authorization code with PKCE), creates them on their first
// sign-in, grants them what their provider group holds, ends their session once the provider no
// longer signs them in, and refuses an ID token that is expired, tampered with or not for it.

const CONFIRM_SECONDS = 10;
let keycloak: Keycloak;
let gateway: ExtraGateway;

beforeAll(async () => {
  keycloak = await startKeycloak();
  gateway = await startExtraGateway({
    OIDC_ISSUER: keycloak.issuer,
    OIDC_CLIENT_ID: CLIENT.id,
    OIDC_CLIENT_SECRET: CLIENT.secret,
    OIDC_CONFIRM_SECONDS: String(CONFIRM_SECONDS),
  });
}, 240_000);

afterAll(async () => {
  await gateway?.stop();
  await keycloak?.stop();
});

/** A call through the single sign-on gateway with the session cookie (and its CSRF token on writes). */
async function asSession(cookie: string, method: string, path: string, json?: unknown, csrf?: string) {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { cookie, ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...(csrf ? { 'x-csrf-token': csrf } : {}) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

it('signs a person in through the provider, creating them the first time, with the role their group holds', async () => {
  const owner = await setupProject({ name: 'sso shared' });
  const granted = await api('POST', `/api/v1/projects/${owner.project.id}/members/`, { token: owner.user.token, json: { group: keycloak.group, role: 'operator', confirm_unseen_group: true } });
  expect(granted.status).toBe(200);

  const { cookie, location } = await signInThroughKeycloak(gateway.url, keycloak.people.alice);
  expect(location).toBe('/console/');
  const session = await asSession(cookie, 'GET', '/api/v1/session/');
  expect([session.status, session.body.user.email, session.body.token_prefix]).toEqual([200, keycloak.people.alice.email, 'sso']);

  const projects = await asSession(cookie, 'GET', '/api/v1/projects/');
  expect(projects.body).toEqual([expect.objectContaining({ id: owner.project.id, role: 'operator' })]);
  const created = await asSession(cookie, 'POST', `/api/v1/projects/${owner.project.id}/groups/`, { name: 'sso-canary' }, session.body.csrf_token);
  expect(created.status).toBe(201);
  const refused = await asSession(cookie, 'POST', `/api/v1/projects/${owner.project.id}/tokens/`, { name: 'ci', scope: 'api', role: 'admin' }, session.body.csrf_token);
  expect([refused.status, refused.body.detail]).toEqual([403, "Create a project token needs the admin role in this project; the caller's role is operator"]);
  // A role held through a group is not the person's to give up: leaving says whom to ask.
  const leave = await asSession(cookie, 'DELETE', `/api/v1/projects/${owner.project.id}/members/me/`, undefined, session.body.csrf_token);
  expect([leave.status, leave.body.detail]).toEqual([409, expect.stringContaining(`through the group "${keycloak.group}" of your sign-in`)]);
  // The Members list shows who holds the group's role, as last seen at sign-in.
  const members = (await api('GET', `/api/v1/projects/${owner.project.id}/members/`, { token: owner.user.token })).body as Array<{ kind: string; holders?: string[] }>;
  expect(members.find((member) => member.kind === 'group')?.holders).toEqual([keycloak.people.alice.email]);

  let audit: Array<{ action: string; actor_via: string; actor_role: string; actor_email: string }> = [];
  for (let attempt = 0; attempt < 50 && !audit.some((event) => event.action === 'group.created'); attempt++) {
    audit = (await api('GET', `/api/v1/projects/${owner.project.id}/audit/?action=group`, { token: owner.user.token })).body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(audit.find((event) => event.action === 'group.created')).toMatchObject({ actor_via: 'sso_session', actor_role: 'operator', actor_email: keycloak.people.alice.email });

  // A second sign-in finds the person the first one created.
  const again = await signInThroughKeycloak(gateway.url, keycloak.people.alice);
  expect((await asSession(again.cookie, 'GET', '/api/v1/session/')).body.user.id).toBe(session.body.user.id);
}, 120_000);

it('ends the session of a person removed at the provider within OIDC_CONFIRM_SECONDS, and they cannot sign in again', async () => {
  const { cookie } = await signInThroughKeycloak(gateway.url, keycloak.people.bob);
  expect((await asSession(cookie, 'GET', '/api/v1/session/')).status).toBe(200);
  const [bob] = (await (await keycloak.admin('GET', `/users?username=${keycloak.people.bob.username}&exact=true`)).json()) as Array<{ id: string }>;
  expect((await keycloak.admin('DELETE', `/users/${bob!.id}`)).status).toBe(204);

  await new Promise((resolve) => setTimeout(resolve, (CONFIRM_SECONDS + 1) * 1000));
  const ended = await asSession(cookie, 'GET', '/api/v1/session/');
  expect([ended.status, ended.body.detail]).toEqual([401, 'the identity provider no longer signs this person in; sign in again']);
  await expect(signInThroughKeycloak(gateway.url, keycloak.people.bob)).rejects.toThrow('Keycloak did not sign bob in');
}, 120_000);

it('stops a personal token made in a single sign-on session once the provider no longer vouches for the person, and it opens no console session then', async () => {
  const { cookie } = await signInThroughKeycloak(gateway.url, keycloak.people.dave);
  const session = await asSession(cookie, 'GET', '/api/v1/session/');
  const made = await asSession(cookie, 'POST', '/api/v1/me/tokens/', { name: 'laptop' }, session.body.csrf_token);
  expect([made.status, made.body.single_sign_on]).toEqual([201, true]);
  // A new personal token expires in PERSONAL_TOKEN_TTL_DAYS (90 days) unless asked otherwise.
  expect(Math.round((Date.parse(made.body.expires_at) - Date.now()) / 86_400_000)).toBe(90);
  const asToken = async (method: string, path: string, json?: unknown) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${made.body.token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: response.status, body: (await response.json()) as { detail?: string } };
  };
  expect((await asToken('GET', '/api/v1/projects/')).status).toBe(200);

  const [dave] = (await (await keycloak.admin('GET', `/users?username=${keycloak.people.dave.username}&exact=true`)).json()) as Array<{ id: string }>;
  expect((await keycloak.admin('PUT', `/users/${dave!.id}`, { enabled: false })).status).toBe(204);
  await new Promise((resolve) => setTimeout(resolve, (CONFIRM_SECONDS + 1) * 1000));
  const refused = await asToken('GET', '/api/v1/projects/');
  expect([refused.status, refused.body.detail]).toEqual([401, 'the identity provider no longer vouches for the person this token was made by; it is revoked']);
  // Revoked for good: the console will not open a session with it either.
  expect((await asToken('POST', '/api/v1/session/', { token: made.body.token })).status).toBe(401);
}, 120_000);

it("signs out of the provider too: the console is sent to its end-session address, which ends the person's session there", async () => {
  const { cookie } = await signInThroughKeycloak(gateway.url, keycloak.people.erin);
  const session = await asSession(cookie, 'GET', '/api/v1/session/');
  const [erin] = (await (await keycloak.admin('GET', `/users?username=${keycloak.people.erin.username}&exact=true`)).json()) as Array<{ id: string }>;
  const sessionsAtProvider = async () => ((await (await keycloak.admin('GET', `/users/${erin!.id}/sessions`)).json()) as unknown[]).length;
  expect(await sessionsAtProvider()).toBe(1);

  const signedOut = await asSession(cookie, 'DELETE', '/api/v1/session/', undefined, session.body.csrf_token);
  expect(signedOut.status).toBe(200);
  const logout = new URL(signedOut.body.provider_logout_url);
  expect(`${logout.origin}${logout.pathname}`).toBe(`${keycloak.issuer}/protocol/openid-connect/logout`);
  expect(logout.searchParams.get('post_logout_redirect_uri')).toBe(`${gateway.url}/console/`);
  expect((await asSession(cookie, 'GET', '/api/v1/session/')).status).toBe(401);

  const back = await fetch(logout, { redirect: 'manual' });
  expect([back.status, back.headers.get('location')]).toEqual([302, `${gateway.url}/console/`]);
  expect(await sessionsAtProvider()).toBe(0);
}, 60_000);

it('refuses an ID token that is tampered with, expired, or of another sign-in', async () => {
  const provider = new OpenIdProvider({ issuer: keycloak.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, scopes: 'openid email profile', groupsClaim: 'groups' });
  const idTokenOf = async () => {
    const response = await fetch(`${keycloak.issuer}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', client_id: CLIENT.id, client_secret: CLIENT.secret, username: keycloak.people.alice.username, password: keycloak.people.alice.password, scope: 'openid email' }).toString(),
    });
    return ((await response.json()) as { id_token: string }).id_token;
  };
  const idToken = await idTokenOf();
  expect(await provider.verifyIdToken(idToken, undefined)).toEqual({ subject: expect.any(String), email: keycloak.people.alice.email, groups: [keycloak.group] });

  // Another person's e-mail in the same signature.
  const [header, payload, signature] = idToken.split('.');
  const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), email: 'mallory@example.com' })).toString('base64url');
  await expect(provider.verifyIdToken(`${header}.${forged}.${signature}`, undefined)).rejects.toThrow('ID token is not valid');
  // Another sign-in's nonce.
  await expect(provider.verifyIdToken(idToken, 'not-this-sign-in')).rejects.toThrow('not for this sign-in');

  // Expired: the realm's tokens made to live one second.
  expect((await keycloak.admin('PUT', '', { accessTokenLifespan: 1 })).status).toBe(204);
  try {
    const shortLived = await idTokenOf();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await expect(provider.verifyIdToken(shortLived, undefined)).rejects.toThrow('"exp" claim timestamp check failed');
  } finally {
    await keycloak.admin('PUT', '', { accessTokenLifespan: 300 });
  }
}, 60_000);

it('refuses a person whose e-mail the provider has not verified: the e-mail is what names them', async () => {
  await expect(signInThroughKeycloak(gateway.url, keycloak.people.carol)).rejects.toThrow("has not verified this person's e-mail address");
}, 60_000);

it('takes each sign-in back once: an unknown or replayed state is 400, and a refusal by the provider is 401', async () => {
  const unknown = await fetch(`${gateway.url}/api/v1/session/sso/callback?code=x&state=never-issued`, { redirect: 'manual' });
  expect(unknown.status).toBe(400);
  const refused = await fetch(`${gateway.url}/api/v1/session/sso/callback?error=access_denied&error_description=the+user+said+no`, { redirect: 'manual' });
  expect([refused.status, ((await refused.json()) as { detail: string }).detail]).toEqual([401, 'the identity provider did not sign you in: the user said no']);
  // Without single sign-on configured (the shared gateway), there is nothing to start.
  expect((await api('GET', '/api/v1/session/sso/')).status).toBe(404);
});
