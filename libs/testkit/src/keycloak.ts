import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startProcess } from '@ota/devstack';
import { testStack } from './stack-env';

// A real OpenID provider for the single sign-on tests: Keycloak, as scripts/ensure-built.mjs
// installs it under .tools/keycloak (--identity-provider), started on loopback with a database
// and a realm of its own: one confidential client, a group claim, and two people.

const home = join(__dirname, '..', '..', '..', '.tools', 'keycloak');
const ADMIN = { username: 'admin', password: 'admin-only-on-loopback' };

export const REALM = 'ota';
export const CLIENT = { id: 'ota-console', secret: 'console-secret-for-tests' };

export interface KeycloakPerson {
  username: string;
  password: string;
  email: string;
  groups: string[];
}

export interface Keycloak {
  issuer: string;
  url: string;
  /** People of this server's realm: e-mails and the group are its own, as the test stack's users are shared by every test. */
  people: { alice: KeycloakPerson; bob: KeycloakPerson; carol: KeycloakPerson & { emailVerified: false }; dave: KeycloakPerson; erin: KeycloakPerson };
  /** The group alice is in. */
  group: string;
  /** An admin API call, with a fresh admin token. */
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  stop(): Promise<void>;
}

function realm(people: Keycloak['people'], group: string): object {
  return {
    realm: REALM,
    enabled: true,
    groups: [{ name: group }],
    users: Object.values(people).map((person) => ({
      username: person.username,
      email: person.email,
      emailVerified: !('emailVerified' in person),
      enabled: true,
      firstName: person.username,
      lastName: 'Tester',
      credentials: [{ type: 'password', value: person.password, temporary: false }],
      groups: person.groups.map((group) => `/${group}`),
    })),
    clients: [
      {
        clientId: CLIENT.id,
        enabled: true,
        publicClient: false,
        secret: CLIENT.secret,
        redirectUris: ['*'],
        standardFlowEnabled: true,
        // The tests also take ID tokens straight from the token endpoint, to tamper with them.
        directAccessGrantsEnabled: true,
        attributes: { 'pkce.code.challenge.method': 'S256', 'post.logout.redirect.uris': '+' },
        protocolMappers: [
          {
            name: 'groups',
            protocol: 'openid-connect',
            protocolMapper: 'oidc-group-membership-mapper',
            config: { 'claim.name': 'groups', 'full.path': 'false', 'id.token.claim': 'true', 'access.token.claim': 'true', 'userinfo.token.claim': 'true' },
          },
        ],
      },
    ],
  };
}

export async function startKeycloak(): Promise<Keycloak> {
  const port = await freePort();
  const work = join(testStack().logDir, `keycloak-${port}`);
  mkdirSync(work, { recursive: true });
  const group = `platform-ops-${port}`;
  const people = {
    alice: { username: 'alice', password: 'alice-password', email: `alice-${port}@sso.example.com`, groups: [group] },
    bob: { username: 'bob', password: 'bob-password', email: `bob-${port}@sso.example.com`, groups: [] },
    // Her e-mail is not verified at the provider.
    carol: { username: 'carol', password: 'carol-password', email: `carol-${port}@sso.example.com`, groups: [], emailVerified: false as const },
    dave: { username: 'dave', password: 'dave-password', email: `dave-${port}@sso.example.com`, groups: [] },
    erin: { username: 'erin', password: 'erin-password', email: `erin-${port}@sso.example.com`, groups: [] },
  };
  // Its own database in the test's log directory; the installation is only read (built --optimized).
  // A local cache: the default clustered one (JGroups) listens on the machine's address, and test
  // traffic stays on loopback (libs/testkit/test/loopback-listeners.int.test.ts).
  const keycloak = startProcess(
    'keycloak',
    join(home, 'bin', 'kc.sh'),
    ['start', '--optimized', '--cache=local', '--http-enabled=true', '--hostname-strict=false', '--http-host=127.0.0.1', `--http-port=${port}`, `--db-url=jdbc:h2:file:${join(work, 'db', 'keycloak')};NON_KEYWORDS=VALUE`],
    { ...process.env, KC_BOOTSTRAP_ADMIN_USERNAME: ADMIN.username, KC_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password },
    { kind: 'file', path: join(work, 'keycloak.log') },
  );
  const url = `http://127.0.0.1:${port}`;
  const issuer = `${url}/realms/${REALM}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    const ready = await fetch(`${url}/realms/master/.well-known/openid-configuration`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await keycloak.stop();
      throw new Error(`Keycloak did not serve ${issuer} within 180 s; see ${join(work, 'keycloak.log')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const adminToken = async () => {
    const response = await fetch(`${url}/realms/master/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: ADMIN.username, password: ADMIN.password }).toString(),
    });
    return ((await response.json()) as { access_token: string }).access_token;
  };
  const created = await fetch(`${url}/admin/realms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify(realm(people, group)),
  });
  if (created.status !== 201) throw new Error(`Keycloak did not create the realm: ${created.status} ${await created.text()}`);
  return {
    issuer,
    url,
    people,
    group,
    admin: async (method, path, body) =>
      fetch(`${url}/admin/realms/${REALM}${path}`, {
        method,
        headers: { authorization: `Bearer ${await adminToken()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    stop: () => keycloak.stop(),
  };
}

/**
 * Signs a person in through the gateway's single sign-on as a browser would, following each
 * redirect and filling in Keycloak's sign-in form; answers the session cookie the gateway set.
 */
export async function signInThroughKeycloak(gatewayUrl: string, person: { username: string; password: string }): Promise<{ cookie: string; location: string }> {
  const cookies = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=');
      cookies.set(name!.trim(), value ?? '');
    }
  };
  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const go = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() } });
    remember(response);
    return response;
  };
  let response = await go(`${gatewayUrl}/api/v1/session/sso/`);
  if (response.status !== 302) throw new Error(`the sign-in did not start: ${response.status} ${await response.text()}`);
  response = await go(response.headers.get('location')!);
  const page = await response.text();
  const action = /<form[^>]*id="kc-form-login"[^>]*action="([^"]+)"/.exec(page)?.[1]?.replace(/&amp;/g, '&');
  if (!action) throw new Error(`Keycloak showed no sign-in form: ${response.status}`);
  response = await go(action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: person.username, password: person.password, credentialId: '' }).toString(),
  });
  if (response.status !== 302) throw new Error(`Keycloak did not sign ${person.username} in: ${response.status}`);
  // Back at the gateway's callback, which sets the session cookie and sends the browser on.
  const back = response.headers.get('location')!;
  if (!back.startsWith(gatewayUrl)) throw new Error(`Keycloak sent ${person.username} to ${back}, not back to the gateway`);
  const callback = await go(back);
  const session = cookies.get('ota_session');
  if (callback.status !== 302 || !session) throw new Error(`the gateway did not open a session: ${callback.status} ${await callback.text()}`);
  return { cookie: `ota_session=${session}`, location: callback.headers.get('location') ?? '' };
}
