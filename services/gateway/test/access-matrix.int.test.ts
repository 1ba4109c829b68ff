import { randomUUID } from 'node:crypto';
import { api, checkBody, createUser, setupProject, type ProjectFixture } from '@ota/testkit';

// docs/api.md's "Tokens and who may call what", one table: every endpoint family against every kind of token, plus missing, malformed
// and revoked tokens, and another owner's personal token.

type TokenKind = 'personal' | 'api' | 'device_scope' | 'device' | 'none' | 'malformed' | 'revoked' | 'stranger';
const TOKEN_KINDS: TokenKind[] = ['personal', 'api', 'device_scope', 'device', 'none', 'malformed', 'revoked', 'stranger'];

interface Row {
  name: string;
  call: (fixture: Fixture, token: string | undefined) => Promise<{ status: number }>;
  /** Expected status by token kind. */
  expect: Record<TokenKind, number>;
}

interface Fixture extends ProjectFixture {
  deviceToken: string;
  deviceUuid: string;
  revokedToken: string;
  strangerToken: string;
}

const developer = (ok: number): Record<TokenKind, number> => ({
  personal: ok,
  api: ok,
  device_scope: 401,
  device: 401,
  none: 401,
  malformed: 401,
  revoked: 401,
  stranger: 404,
});

const ROWS: Row[] = [
  {
    name: 'POST /ota/check/',
    call: (f, token) => api('POST', '/api/v1/ota/check/', { token, json: checkBody(token === f.deviceScopeToken ? 'fleet-device' : 'matrix-device') }),
    expect: { personal: 401, api: 401, device_scope: 200, device: 200, none: 401, malformed: 401, revoked: 401, stranger: 401 },
  },
  {
    name: 'POST /ota/status/',
    // The fleet token speaks for a device it registered; the device token for its own device.
    call: (f, token) =>
      api('POST', '/api/v1/ota/status/', {
        token,
        json: { device_id: token === f.deviceScopeToken ? 'fleet-device' : 'matrix-device', deployment_id: randomUUID(), event: 'downloaded' },
      }),
    // The credential passes; the deployment does not exist, which the device API answers with 404.
    expect: { personal: 401, api: 401, device_scope: 404, device: 404, none: 401, malformed: 401, revoked: 401, stranger: 401 },
  },
  {
    name: 'GET /projects/',
    call: (f, token) => api('GET', '/api/v1/projects/', { token }),
    expect: { ...developer(200), stranger: 200 },
  },
  {
    name: 'POST /projects/',
    call: (f, token) => api('POST', '/api/v1/projects/', { token, json: { name: 'matrix' } }),
    expect: { ...developer(201), api: 403, stranger: 201 },
  },
  {
    name: 'DELETE /projects/{id}/',
    // A project of its own for each cell, so that one cell's delete cannot change another's answer.
    call: async (f, token) => {
      const target = await api('POST', '/api/v1/projects/', { token: f.user.token, json: { name: 'doomed' } });
      const path = `/api/v1/projects/${target.body.id}/`;
      // An api token belongs to one project: give it one of the project under test.
      return api('DELETE', token === f.apiToken ? `/api/v1/projects/${f.project.id}/` : path, { token });
    },
    expect: { ...developer(204), api: 403 },
  },
  { name: 'GET /projects/{id}/', call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/`, { token }), expect: developer(200) },
  {
    name: 'PATCH /projects/{id}/',
    call: (f, token) => api('PATCH', `/api/v1/projects/${f.project.id}/`, { token, json: { require_esp_image: false } }),
    expect: developer(200),
  },
  { name: 'GET /projects/{id}/devices/', call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token }), expect: developer(200) },
  {
    name: 'GET /projects/{id}/devices/{did}/',
    call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/devices/${f.deviceUuid}/`, { token }),
    expect: developer(200),
  },
  {
    name: 'GET /projects/{id}/devices/{did}/check-events/',
    call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/devices/${f.deviceUuid}/check-events/`, { token }),
    expect: developer(200),
  },
  { name: 'GET /projects/{id}/groups/', call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/groups/`, { token }), expect: developer(200) },
  {
    name: 'POST /projects/{id}/groups/',
    call: (f, token) => api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token, json: { name: `g-${randomUUID().slice(0, 8)}` } }),
    expect: developer(201),
  },
  { name: 'GET /projects/{id}/channels/', call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/channels/`, { token }), expect: developer(200) },
  { name: 'GET /projects/{id}/artifacts/', call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/artifacts/`, { token }), expect: developer(200) },
  {
    name: 'GET /projects/{id}/deployments/',
    call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token }),
    expect: developer(200),
  },
  { name: 'GET /projects/{id}/tokens/', call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/tokens/`, { token }), expect: developer(200) },
  {
    name: 'GET /projects/{id}/signing-keys/',
    call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/signing-keys/`, { token }),
    expect: developer(200),
  },
  { name: 'GET /projects/{id}/audit/', call: (f, token) => api('GET', `/api/v1/projects/${f.project.id}/audit/`, { token }), expect: developer(200) },
  {
    name: 'GET /me/tokens/',
    call: (f, token) => api('GET', '/api/v1/me/tokens/', { token }),
    expect: { ...developer(200), api: 403, stranger: 200 },
  },
  {
    name: 'GET /users?email=',
    call: (f, token) => api('GET', `/api/v1/users?email=${encodeURIComponent('nobody@example.com')}`, { token }),
    expect: { ...developer(403), stranger: 403 },
  },
];

let fixture: Fixture;

beforeAll(async () => {
  const base = await setupProject({ name: 'access matrix' });
  const provisioned = await api('POST', `/api/v1/projects/${base.project.id}/devices/`, { token: base.user.token, json: { device_id: 'matrix-device' } });
  await api('POST', '/api/v1/ota/check/', { token: base.deviceScopeToken, json: checkBody('fleet-device') });
  const revoked = await api('POST', '/api/v1/me/tokens/', { token: base.user.token, json: { name: 'to revoke' } });
  await api('DELETE', `/api/v1/me/tokens/${revoked.body.id}/`, { token: base.user.token });
  fixture = {
    ...base,
    deviceToken: provisioned.body.token,
    deviceUuid: provisioned.body.id,
    revokedToken: revoked.body.token,
    strangerToken: createUser().token,
  };
});

function tokenOf(kind: TokenKind): string | undefined {
  switch (kind) {
    case 'personal':
      return fixture.user.token;
    case 'api':
      return fixture.apiToken;
    case 'device_scope':
      return fixture.deviceScopeToken;
    case 'device':
      return fixture.deviceToken;
    case 'none':
      return undefined;
    case 'malformed':
      return 'not a token at all';
    case 'revoked':
      return fixture.revokedToken;
    case 'stranger':
      return fixture.strangerToken;
  }
}

const cells = ROWS.flatMap((row) => TOKEN_KINDS.map((kind) => [row.name, kind, row.expect[kind], row] as const));

it.each(cells)('%s with a %s token answers %i', async (_name, kind, expected, row) => {
  const response = await row.call(fixture, tokenOf(kind));
  expect(response.status).toBe(expected);
});
