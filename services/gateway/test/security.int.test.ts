import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import mongoose from 'mongoose';
import { MANIFEST, api, checkBody, createUser, eventually, grantRole, makeCoreDump, makeEspBuild, makeEspSbom, randomBinary, setupProject, startExtraGateway, testStack, uploadForm, type ApiResponse, type ProjectFixture } from '@ota/testkit';
import { DownloadUrlSigner } from '../src/http/download-url';

// The OWASP API Security Top 10 (2023) as it applies here, over every operation the gateway's
// OpenAPI document lists, so that an operation added later is covered without touching this file.
// docs/security.md says which test shows which guarantee.

type Access = 'developer' | 'personal' | 'staff' | 'device' | 'public';

interface Operation {
  method: string;
  /** OpenAPI path, e.g. /api/v1/projects/{id}/devices/{did}/ */
  path: string;
  operationId: string;
  access: Access;
  jsonBody: boolean;
  multipart: boolean;
}

/** Everything one owner has: every kind of object and token, so that any path can be filled in. */
interface World extends ProjectFixture {
  deviceUuid: string;
  /** The device's own id string, as it sends it in check and status bodies. */
  deviceId: string;
  deviceToken: string;
  groupId: string;
  channelId: string;
  artifactId: string;
  earlierArtifactId: string;
  advisoryId: string;
  deploymentId: string;
  signingKeyId: string;
  webhookId: string;
  /** The webhook's signing secret, shown once at creation. */
  webhookSecret: string;
  apiTokenId: string;
  patId: string;
  membershipChangeId: string;
  /** A person granted a role in the project, and a group granted one (docs/api.md, "Roles"). */
  memberUserId: string;
  memberEmail: string;
  invitedEmail: string;
  memberGroup: string;
  /** A group of crashes, from a core dump its device sent (docs/api.md, "Core dumps"). */
  crashGroupId: string;
}

let operations: Operation[];
let victim: World;
let attacker: World;

async function buildWorld(): Promise<World> {
  const fixture = await setupProject({ maxUploadsPerMonth: 0, maxDevices: 0 });
  const token = fixture.user.token;
  const base = `/api/v1/projects/${fixture.project.id}`;
  const deviceId = `unit-${randomUUID()}`;
  const device = await api('POST', `${base}/devices/`, { token, json: { device_id: deviceId } });
  const group = await api('POST', `${base}/groups/`, { token, json: { name: 'canary' } });
  await api('POST', `${base}/groups/${group.body.id}/members/`, { token, json: { device_id: device.body.id } });
  const channel = await api('POST', `${base}/channels/`, { token, json: { name: 'beta' } });
  const artifact = await api('POST', `${base}/artifacts/`, { token, body: uploadForm(MANIFEST, randomBinary(2048)) });
  // Its SBOM: a document to read back.
  expect((await api('PUT', `${base}/artifacts/${artifact.body.id}/sbom/`, { token, body: makeEspSbom({ version: '1.0.0', components: [{ name: 'mbedtls', version: '3.6.2' }], format: 'spdx-json' }) })).status).toBe(200);
  // A vulnerability recorded against it.
  const advisoryId = `CVE-2026-${String(Math.floor(Math.random() * 90_000) + 10_000)}`;
  expect((await api('POST', `${base}/vulnerabilities/`, { token, json: { advisory_id: advisoryId, component: { name: 'mbedtls' }, versions: '<3.6.3' } })).status).toBe(201);
  // An earlier build: what a delta patch to `artifact` starts from.
  const earlier = await api('POST', `${base}/artifacts/`, { token, body: uploadForm(MANIFEST, randomBinary(2048)) });
  const deployment = await api('POST', `${base}/deployments/`, { token, json: { artifact_id: artifact.body.id, target_group_ids: [group.body.id] } });
  const key = await api('POST', `${base}/signing-keys/`, { token, json: { name: 'release key', public_key: ed25519PublicKey() } });
  const webhook = await api('POST', `${base}/webhooks/`, { token, json: { url: 'https://hooks.example.com/ota', events: ['artifact.uploaded'] } });
  const membershipChange = await api('POST', `${base}/groups/${group.body.id}/members/bulk-changes/`, { token, json: { action: 'add', matching: {} } });
  expect(membershipChange.status).toBe(202);
  const member = createUser();
  const memberGroup = `ops-${randomUUID()}`;
  await grantRole(fixture, member, 'viewer');
  expect((await api('POST', `${base}/members/`, { token, json: { group: memberGroup, role: 'viewer', confirm_unseen_group: true } })).status).toBe(200);
  // An invitation no one accepted yet.
  const invitedEmail = `invited-${randomUUID()}@example.com`;
  expect((await api('POST', `${base}/members/`, { token, json: { email: invitedEmail, role: 'viewer' } })).status).toBe(202);
  // A crashing build and a core dump of it from the device: a crash group to read.
  const crashing = makeEspBuild({ crashCode: true, version: '9.0.0' });
  const crashBuild = await api('POST', `${base}/artifacts/`, { token, body: uploadForm({ ...MANIFEST, chip_family: 'esp32c3' }, crashing.image) });
  expect(crashBuild.status).toBe(201);
  const dump = makeCoreDump({ elf: crashing.elf });
  const dumpSha256 = createHash('sha256').update(dump).digest('hex');
  // From a device of its own, so that the world's device has checked nothing.
  expect((await api('POST', '/api/v1/ota/check/', { token: fixture.deviceScopeToken, json: checkBody('crashing-unit') })).status).toBe(200);
  const sent = await api('POST', `/api/v1/ota/coredump/?device_id=crashing-unit&sha256=${dumpSha256}&size=${dump.length}&offset=0`, { token: fixture.deviceScopeToken, body: dump });
  expect(sent.body.complete).toBe(true);
  const crashGroups = await eventually(async () => (await api('GET', `${base}/crashes/`, { token })).body as Array<{ id: string }>, (list) => list.length === 1);
  const tokens = await api('GET', `${base}/tokens/`, { token });
  const pats = await api('GET', '/api/v1/me/tokens/', { token });
  for (const created of [device, group, channel, artifact, earlier, deployment, key, webhook]) expect(created.status).toBe(201);
  return {
    ...fixture,
    deviceUuid: device.body.id,
    deviceId,
    deviceToken: device.body.token,
    groupId: group.body.id,
    channelId: channel.body.id,
    artifactId: artifact.body.id,
    earlierArtifactId: earlier.body.id,
    advisoryId,
    deploymentId: deployment.body.id,
    signingKeyId: key.body.id,
    webhookId: webhook.body.id,
    webhookSecret: webhook.body.secret,
    apiTokenId: tokens.body.find((entry: { scope: string }) => entry.scope === 'api').id,
    patId: pats.body[0].id,
    membershipChangeId: membershipChange.body.id,
    memberUserId: member.user_id,
    memberEmail: member.email,
    invitedEmail,
    memberGroup,
    crashGroupId: crashGroups[0]!.id,
  };
}

/** A client of the test stack's MongoDB server, for reading what the services stored. */
async function withDatabase<T>(read: (client: mongoose.mongo.MongoClient) => Promise<T>): Promise<T> {
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    return await read(connection.getClient());
  } finally {
    await connection.close();
  }
}

function ed25519PublicKey(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  return publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
}

/** Queries some reads need to be served at all. */
const REQUIRED_QUERIES: Record<string, string> = { getExposure: '?name=mbedtls' };

/** The operation's path with the ids of `ids` (a world, or a mix of two). */
function pathOf(operation: Operation, ids: World): string {
  const path = `${operation.path}${REQUIRED_QUERIES[operation.operationId] ?? ''}`;
  return path
    .replace('{id}', ids.project.id)
    .replace('{vid}', ids.advisoryId)
    .replace('{aid}', ids.artifactId)
    .replace('{artifactId}', ids.artifactId)
    .replace('{gid}', ids.groupId)
    .replace('{cgid}', ids.crashGroupId)
    .replace('{cid}', ids.channelId)
    .replace('{bid}', ids.membershipChangeId)
    .replace('{key_id}', ids.signingKeyId)
    .replace('{wid}', ids.webhookId)
    .replace('{uid}', ids.memberUserId)
    .replace('{pid}', ids.project.id)
    .replace('{email}', encodeURIComponent(ids.invitedEmail))
    .replace('{group}', encodeURIComponent(ids.memberGroup))
    .replace('{tid}', path.startsWith('/api/v1/me/') ? ids.patId : ids.apiTokenId)
    .replace('{did}', path.includes('/deployments/') ? ids.deploymentId : ids.deviceUuid);
}

/** A body the operation would accept in `world`, so that a refusal is about who asks, not what. */
function validBody(operation: Operation, world: World): Pick<Parameters<typeof api>[2] & object, 'json' | 'body'> {
  if (operation.multipart) {
    const fields: Record<string, string> = operation.operationId === 'release' ? { channel_name: 'beta' } : {};
    return { body: uploadForm(MANIFEST, randomBinary(1024), fields) };
  }
  if (!operation.jsonBody) return {};
  const bodies: Record<string, unknown> = {
    createProject: { name: 'another' },
    createPersonalToken: { name: 'ci' },
    createProjectToken: { name: 'ci', scope: 'api', role: 'admin' },
    createDevice: { device_id: `unit-${randomUUID()}` },
    updateDevice: { active: false, metadata: { note: 'changed' } },
    createGroup: { name: `group-${randomUUID()}` },
    createChannel: { name: `channel-${randomUUID()}` },
    renameGroup: { name: `group-${randomUUID()}` },
    renameChannel: { name: `channel-${randomUUID()}` },
    changeGroupMembers: { add: [world.deviceUuid] },
    groupMembersChangeImpact: { add: [world.deviceUuid] },
    startMembershipChange: { action: 'add', matching: {} },
    addGroupMember: { device_id: world.deviceUuid },
    updateArtifact: { archived: true },
    updateProject: { require_esp_image: true },
    requestPatch: { base_artifact_id: world.earlierArtifactId },
    createSigningKey: { name: 'another key', public_key: ed25519PublicKey() },
    createDeployment: { artifact_id: world.artifactId, target_group_ids: [world.groupId] },
    transitionDeployment: { action: 'cancel' },
    checkForUpdate: checkBody('unit-device'),
    reportStatus: { device_id: 'unit-device', deployment_id: world.deploymentId, event: 'downloaded' },
    offerStanding: { device_id: 'unit-device', deployment_id: world.deploymentId },
    createSession: { token: world.user.token },
    createWebhook: { url: 'https://hooks.example.com/ota', events: ['deployment.started'] },
    grantRole: { email: world.memberEmail, role: 'operator' },
    recordVulnerability: { advisory_id: `CVE-2026-${String(Math.floor(Math.random() * 90_000) + 10_000)}`, component: { name: 'lwip' } },
    setVexStatement: { status: 'under_investigation' },
  };
  if (!(operation.operationId in bodies)) throw new Error(`no valid body known for ${operation.operationId}: add one here`);
  return { json: bodies[operation.operationId] };
}

function call(operation: Operation, ids: World, token: string | undefined, bodyWorld: World = ids, headers?: Record<string, string>): Promise<ApiResponse> {
  return api(operation.method.toUpperCase(), pathOf(operation, ids), { token, headers, ...validBody(operation, bodyWorld) });
}

const projectScoped = () => operations.filter((operation) => operation.path.includes('{id}'));

/** What an owner can see of their own project; nothing another caller does may change it. */
async function snapshot(world: World): Promise<unknown> {
  const token = world.user.token;
  const base = `/api/v1/projects/${world.project.id}`;
  const read = async (path: string) => {
    const response = await api('GET', path, { token });
    // last_used_at moves with the owner's own reads; everything else must stay as it was.
    return JSON.parse(JSON.stringify(response.body, (key, value) => (key === 'last_used_at' ? undefined : value)));
  };
  return {
    project: await read(`${base}/`),
    devices: await read(`${base}/devices/`),
    groups: await read(`${base}/groups/`),
    members: await read(`${base}/groups/${world.groupId}/members/`),
    channels: await read(`${base}/channels/`),
    artifacts: await read(`${base}/artifacts/`),
    deployments: await read(`${base}/deployments/`),
    keys: await read(`${base}/signing-keys/`),
    tokens: await read(`${base}/tokens/`),
    vulnerabilities: await read(`${base}/vulnerabilities/`),
    personalTokens: await read('/api/v1/me/tokens/'),
  };
}

beforeAll(async () => {
  const document = (await (await fetch(`${testStack().gatewayUrl}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { operationId: string; 'x-access': Access; requestBody?: { content: Record<string, unknown> } }>>;
  };
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method,
      path,
      operationId: operation.operationId,
      access: operation['x-access'],
      jsonBody: Boolean(operation.requestBody?.content['application/json']),
      multipart: Boolean(operation.requestBody?.content['multipart/form-data']),
    })),
  );
  victim = await buildWorld();
  attacker = await buildWorld();
});

describe('API1 broken object-level authorization', () => {
  test('the OpenAPI document lists every operation with who may call it', () => {
    expect(operations.length).toBeGreaterThanOrEqual(40);
    for (const operation of operations) expect(['developer', 'personal', 'staff', 'device', 'public']).toContain(operation.access);
  });

  test("another owner's personal and api tokens on every project-scoped operation: 404, and the project is unchanged", async () => {
    const before = await snapshot(victim);
    const answers: string[] = [];
    for (const operation of projectScoped()) {
      for (const [kind, token] of [
        ['personal', attacker.user.token],
        ['api', attacker.apiToken],
      ] as const) {
        const response = await call(operation, victim, token, victim);
        // A project token on a personal-only operation is refused for its kind (403) before any lookup.
        const expected = kind === 'api' && operation.access === 'personal' ? 403 : 404;
        if (response.status !== expected) answers.push(`${kind} ${operation.method} ${operation.path}: ${response.status} (expected ${expected})`);
      }
    }
    expect(answers).toEqual([]);
    expect(await snapshot(victim)).toEqual(before);
  });

  test("the caller's own project with another owner's object ids, in the path or the body: never served", async () => {
    const before = await snapshot(victim);
    const mixed: World = {
      ...victim,
      project: attacker.project,
      apiTokenId: victim.apiTokenId,
      patId: victim.patId,
    };
    // Operations that name another object in the path, or in the body (a member, a deployment's build and targets).
    const naming = projectScoped().filter((candidate) => /\{(aid|did|gid|cgid|key_id|tid|vid)\}/.test(candidate.path) || ['addGroupMember', 'createDeployment'].includes(candidate.operationId));
    expect(naming.length).toBeGreaterThanOrEqual(15);
    const answers: string[] = [];
    for (const operation of naming) {
      const response = await call(operation, mixed, attacker.user.token, victim);
      if (![400, 404].includes(response.status)) answers.push(`${operation.method} ${operation.path}: ${response.status}`);
    }
    // A personal token's id of another user on /me/tokens/{tid}/.
    const revokeOther = await api('DELETE', `/api/v1/me/tokens/${victim.patId}/`, { token: attacker.user.token });
    if (revokeOther.status !== 404) answers.push(`DELETE /me/tokens/{other user's token}: ${revokeOther.status}`);
    expect(answers).toEqual([]);
    expect(await snapshot(victim)).toEqual(before);
  });

  test('device API: a fleet token cannot report for another project\'s deployment, a device token cannot speak for another device', async () => {
    const crossDeployment = await api('POST', '/api/v1/ota/status/', {
      token: attacker.deviceScopeToken,
      json: { device_id: 'unit-device', deployment_id: victim.deploymentId, event: 'confirmed', build_number: 1 },
    });
    expect(crossDeployment.status).toBe(404);
    const otherDevice = await api('POST', '/api/v1/ota/check/', { token: victim.deviceToken, json: checkBody('some-other-device') });
    expect(otherDevice.status).toBe(403);
  });

  test("staff may read another owner's project but every write there is 403", async () => {
    const staff = createUser({ staff: true });
    const before = await snapshot(victim);
    const answers: string[] = [];
    for (const operation of projectScoped()) {
      const response = await call(operation, victim, staff.token, victim);
      const expected = operation.method === 'get' ? 200 : 403;
      if (response.status !== expected) answers.push(`${operation.method} ${operation.path}: ${response.status} (expected ${expected})`);
    }
    expect(answers).toEqual([]);
    expect(await snapshot(victim)).toEqual(before);
    // Staff reads leave no trace in the customer's audit trail.
    const audit = await api('GET', `/api/v1/projects/${victim.project.id}/audit/`, { token: victim.user.token });
    expect(audit.body.filter((event: { actor_id: string }) => event.actor_id === staff.user_id)).toEqual([]);
  });
});

describe('API2 broken authentication', () => {
  const malformed = (valid: string): Record<string, Record<string, string>> => ({
    'no header': {},
    'empty bearer': { authorization: 'Bearer ' },
    'scheme only': { authorization: 'Bearer' },
    'basic scheme': { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` },
    'token without scheme': { authorization: valid },
    'one character changed': { authorization: `Bearer ${valid.slice(0, -1)}${valid.endsWith('A') ? 'B' : 'A'}` },
    'truncated': { authorization: `Bearer ${valid.slice(0, -4)}` },
    'extended': { authorization: `Bearer ${valid}x` },
    'two tokens': { authorization: `Bearer ${valid} ${valid}` },
    'very long': { authorization: `Bearer ota_pat_${'a'.repeat(6000)}` },
    'prefix only': { authorization: `Bearer ${valid.slice(0, 12)}` },
  });

  test('malformed credentials on every operation: 401 with a detail, never served', async () => {
    const answers: string[] = [];
    for (const operation of operations.filter((candidate) => candidate.access !== 'public')) {
      const valid = operation.access === 'device' ? victim.deviceScopeToken : victim.user.token;
      for (const [name, headers] of Object.entries(malformed(valid))) {
        const response = await call(operation, victim, undefined, victim, headers);
        if (response.status !== 401 || !response.body.detail) answers.push(`${name}: ${operation.method} ${operation.path}: ${response.status}`);
      }
    }
    expect(answers).toEqual([]);
  });

  test('revoked tokens of every kind on every operation: 401', async () => {
    const world = await buildWorld();
    const base = `/api/v1/projects/${world.project.id}`;
    const owner = world.user.token;
    const extraPat = await api('POST', '/api/v1/me/tokens/', { token: owner, json: { name: 'to revoke' } });
    const revoked: Record<string, string> = {
      personal: extraPat.body.token,
      api: world.apiToken,
      device_scope: world.deviceScopeToken,
      device: world.deviceToken,
    };
    const projectTokens = (await api('GET', `${base}/tokens/`, { token: owner })).body as Array<{ id: string; prefix: string }>;
    expect((await api('DELETE', `/api/v1/me/tokens/${extraPat.body.id}/`, { token: owner })).status).toBe(204);
    for (const token of projectTokens) expect((await api('DELETE', `${base}/tokens/${token.id}/`, { token: owner })).status).toBe(204);
    expect((await api('DELETE', `${base}/devices/${world.deviceUuid}/token/`, { token: owner })).status).toBe(204);

    const answers: string[] = [];
    for (const operation of operations.filter((candidate) => candidate.access !== 'public')) {
      for (const [kind, token] of Object.entries(revoked)) {
        const response = await call(operation, world, token);
        if (response.status !== 401) answers.push(`revoked ${kind}: ${operation.method} ${operation.path}: ${response.status}`);
      }
    }
    expect(answers).toEqual([]);
  });
});

describe('API5 broken function-level authorization: every operation against every kind of credential it does not take', () => {
  test('the 5.4 matrix, cell by cell', async () => {
    const nonStaff = victim.user.token;
    const credentials: Record<string, string> = {
      personal: victim.user.token,
      api: victim.apiToken,
      device_scope: victim.deviceScopeToken,
      device: victim.deviceToken,
    };
    // Which kinds each access level refuses, and with which status (docs/api.md, "Errors").
    const refusals: Record<Access, Record<string, number>> = {
      developer: { device_scope: 401, device: 401 },
      personal: { api: 403, device_scope: 401, device: 401 },
      staff: { personal: 403, api: 403, device_scope: 401, device: 401 },
      device: { personal: 401, api: 401 },
      public: {},
    };
    const answers: string[] = [];
    let cells = 0;
    for (const operation of operations) {
      for (const [kind, status] of Object.entries(refusals[operation.access])) {
        cells += 1;
        const response = await call(operation, victim, kind === 'personal' ? nonStaff : credentials[kind]);
        if (response.status !== status) answers.push(`${kind}: ${operation.method} ${operation.path}: ${response.status} (expected ${status})`);
      }
    }
    expect(cells).toBeGreaterThan(80);
    expect(answers).toEqual([]);
  });
});

describe('API3 mass assignment', () => {
  test('every developer body with a key it does not define: 422 naming the key, and nothing changes', async () => {
    const world = await buildWorld();
    const before = await snapshot(world);
    const answers: string[] = [];
    let bodies = 0;
    for (const operation of operations.filter((candidate) => candidate.jsonBody && candidate.access !== 'device')) {
      for (const key of ['owner_id', 'project_id', 'is_staff', 'id', 'created_at']) {
        bodies += 1;
        const { json } = validBody(operation, world);
        const response = await api(operation.method.toUpperCase(), pathOf(operation, world), { token: world.user.token, json: { ...(json as object), [key]: key === 'is_staff' ? true : randomUUID() } });
        const named = Array.isArray(response.body.detail) && JSON.stringify(response.body.detail).includes(key);
        if (response.status !== 422 || !named) answers.push(`${key}: ${operation.method} ${operation.path}: ${response.status} ${JSON.stringify(response.body.detail)}`);
      }
    }
    expect(bodies).toBeGreaterThan(40);
    expect(answers).toEqual([]);
    expect(await snapshot(world)).toEqual(before);
  });

  test('a device cannot choose its channel, groups or cohort: such keys are ignored', async () => {
    const world = await buildWorld();
    const token = world.user.token;
    const base = `/api/v1/projects/${world.project.id}`;
    // An active build on the beta channel for everyone, and one on stable for nobody (0%).
    const beta = await api('POST', `${base}/release/`, { token, body: uploadForm(MANIFEST, randomBinary(1024), { channel_name: 'beta' }) });
    const stable = await api('POST', `${base}/release/`, { token, body: uploadForm(MANIFEST, randomBinary(1024), { rollout_percentage: '0' }) });
    expect([beta.status, stable.status]).toEqual([201, 201]);
    const pushy = {
      ...checkBody('pushy-device'),
      channel_id: world.channelId,
      channel: 'beta',
      channel_name: 'beta',
      group_ids: [world.groupId],
      cohort: 0,
      bucket: 0,
      rollout_percentage: 100,
    };
    const answer = await api('POST', '/api/v1/ota/check/', { token: world.deviceScopeToken, json: pushy });
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('not_in_rollout');
    const devices = (await api('GET', `${base}/devices/`, { token })).body as Array<{ device_id: string; channel_id: string; group_ids: string[] }>;
    const pushyDevice = devices.find((device) => device.device_id === 'pushy-device')!;
    expect(pushyDevice.channel_id).toBe(world.defaultChannelId);
    expect(pushyDevice.group_ids).toEqual([]);
    // A status report cannot move it either.
    const report = await api('POST', '/api/v1/ota/status/', {
      token: world.deviceScopeToken,
      json: { device_id: 'pushy-device', deployment_id: beta.body.deployment_id, event: 'confirmed', build_number: beta.body.build_number, channel_id: world.channelId },
    });
    expect(report.status).toBe(200);
    const after = (await api('GET', `${base}/devices/`, { token })).body as Array<{ device_id: string; channel_id: string }>;
    expect(after.find((device) => device.device_id === 'pushy-device')!.channel_id).toBe(world.defaultChannelId);
  });
});

describe('API4 unrestricted resource consumption', () => {
  test('a JSON body over JSON_BODY_LIMIT_BYTES (64 KiB by default) gets 413 on every operation that takes one', async () => {
    const oversized = JSON.stringify({ name: 'x'.repeat(64 * 1024 + 1) });
    const answers: string[] = [];
    for (const operation of operations.filter((candidate) => candidate.jsonBody)) {
      const token = operation.access === 'device' ? victim.deviceScopeToken : victim.user.token;
      const response = await api(operation.method.toUpperCase(), pathOf(operation, victim), { token, body: oversized, headers: { 'content-type': 'application/json' } });
      if (response.status !== 413 || !String(response.body.detail).includes('larger than')) answers.push(`${operation.method} ${operation.path}: ${response.status}`);
    }
    expect(answers).toEqual([]);
  });

  test('a JSON body nested past 32 levels or holding more than 10,000 values gets 400 with a detail on every operation that takes one', async () => {
    // 5,000 levels in 10 KiB once made the status report's JSON.stringify overflow the stack (a 500).
    const deep = `{"name": ${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    const wide = JSON.stringify({ name: Array.from({ length: 12_000 }, () => 0) });
    const answers: string[] = [];
    for (const operation of operations.filter((candidate) => candidate.jsonBody)) {
      const token = operation.access === 'device' ? victim.deviceScopeToken : victim.user.token;
      for (const [shape, body, expected] of [['deep', deep, /deeper than 32 levels/], ['wide', wide, /more than 10000 values/]] as const) {
        const response = await api(operation.method.toUpperCase(), pathOf(operation, victim), { token, body, headers: { 'content-type': 'application/json' } });
        if (response.status !== 400 || !expected.test(String(response.body.detail))) answers.push(`${shape} ${operation.method} ${operation.path}: ${response.status}`);
      }
    }
    expect(answers).toEqual([]);
  });

  test("a status report's detail nests at most four levels, and a detail stored deeper before that limit reads as a note", async () => {
    const report = (detail: unknown) =>
      api('POST', '/api/v1/ota/status/', { token: victim.deviceToken, json: { deployment_id: victim.deploymentId, event: 'failed', reason: 'download_failed', detail } });
    const levels = (count: number): unknown => (count === 1 ? { code: 1 } : { inner: levels(count - 1) });
    const refused = await report({ a: [[[[1]]]] });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/detail/);
    expect((await report({ 'esp.err': [{ code: 5 }], four: levels(3) })).status).toBe(200);

    // A report stored before the limit, 3,000 levels deep: its events page still parses in any reader.
    await withDatabase(async (client) => {
      const rollout = client.db(String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'rollout'));
      await rollout.collection('device_reports').insertOne({
        _id: randomUUID() as never,
        project_id: victim.project.id,
        deployment_id: victim.deploymentId,
        device_id: victim.deviceUuid,
        event: 'failed',
        status: 'failed',
        build_number: null,
        reason: 'download_failed',
        detail_json: `{"a":${'['.repeat(3_000)}${']'.repeat(3_000)}}`,
        created_at: new Date(Date.now() + 60_000),
      });
    });
    const events = await api('GET', `/api/v1/projects/${victim.project.id}/devices/${victim.deviceUuid}/events/`, { token: victim.user.token });
    expect(events.status).toBe(200);
    expect(events.body[0].detail).toEqual({ dropped: expect.stringMatching(/deeper than 4 levels/) });
    expect(events.body[1].detail).toEqual({ 'esp.err': [{ code: 5 }], four: levels(3) });
  });

  test('a token over its rate limit gets 429 with Retry-After; other tokens are not held back', async () => {
    const gateway = await startExtraGateway({
      RATE_LIMIT_DEVELOPER_PER_SECOND: '1',
      RATE_LIMIT_DEVELOPER_BURST: '5',
      RATE_LIMIT_DEVICE_TOKEN_PER_SECOND: '1',
      RATE_LIMIT_DEVICE_TOKEN_BURST: '3',
      RATE_LIMIT_FLEET_TOKEN_PER_SECOND: '1',
      RATE_LIMIT_FLEET_TOKEN_BURST: '4',
    });
    try {
      const burst = async (token: string, count: number, request: () => { method: string; path: string; json?: unknown }) => {
        const statuses: Array<{ status: number; retryAfter: string | null }> = [];
        for (let i = 0; i < count; i += 1) {
          const { method, path, json } = request();
          const response = await api(method, `${gateway.url}${path}`, { token, json });
          statuses.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
        }
        return statuses;
      };
      const developer = await burst(victim.apiToken, 12, () => ({ method: 'GET', path: `/api/v1/projects/${victim.project.id}/` }));
      // The bucket starts full: the first five pass; the rest of a quick burst is refused.
      expect(developer.slice(0, 5).map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
      const limited = developer.filter((answer) => answer.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      for (const answer of limited) expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(developer.every((answer) => answer.status === 200 || answer.status === 429)).toBe(true);
      // The owner's personal token has a bucket of its own.
      expect((await api('GET', `${gateway.url}/api/v1/projects/${victim.project.id}/`, { token: victim.user.token })).status).toBe(200);

      const device = await burst(victim.deviceToken, 8, () => ({ method: 'POST', path: '/api/v1/ota/check/', json: checkBody(victim.deviceId) }));
      expect(device.slice(0, 3).map((answer) => answer.status)).not.toContain(429);
      expect(device.some((answer) => answer.status === 429 && Number(answer.retryAfter) >= 1)).toBe(true);
      const fleet = await burst(victim.deviceScopeToken, 10, () => ({ method: 'POST', path: '/api/v1/ota/check/', json: checkBody(`fleet-${randomUUID()}`) }));
      expect(fleet.some((answer) => answer.status === 429)).toBe(true);
    } finally {
      await gateway.stop();
    }
  });

  test('histories stay bounded: 45 checks show 20 decisions in the API, and leave at most 39 in the store', async () => {
    const world = await buildWorld();
    for (let i = 0; i < 45; i += 1) {
      expect((await api('POST', '/api/v1/ota/check/', { token: world.deviceToken, json: checkBody(world.deviceId, { current_build_number: i }) })).status).toBe(200);
    }
    const path = `/api/v1/projects/${world.project.id}/devices/${world.deviceUuid}/check-events/`;
    // Each check is recorded before it is answered: the 20 newest are there at once.
    const events = (await api('GET', path, { token: world.user.token })).body as Array<{ reported_build_number: number }>;
    expect(events.map((event) => event.reported_build_number)).toEqual(Array.from({ length: 20 }, (_, i) => 44 - i));
    // "Capped at 20" (docs/api.md, "Records"): a larger limit is served, with no more than the 20 kept.
    const overCap = await api('GET', `${path}?limit=50`, { token: world.user.token });
    expect(overCap.status).toBe(200);
    expect(overCap.body).toHaveLength(20);
    // The 40th check trimmed the records beyond the newest 20 beside its answer: checks 21 to 45 stay.
    const stored = await eventually(
      () =>
        withDatabase((client) => {
          const database = String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'registry');
          return client.db(database).collection('check_records').countDocuments({ device_id: world.deviceUuid });
        }),
      (count) => count <= 39,
    );
    expect(stored).toBe(25);
  });
});

describe('download URLs', () => {
  test('a signed URL works as issued; altered in any part, or expired, it is refused with 403', async () => {
    const world = await buildWorld();
    const base = `/api/v1/projects/${world.project.id}`;
    const release = await api('POST', `${base}/release/`, { token: world.user.token, body: uploadForm(MANIFEST, randomBinary(4096)) });
    const offer = await api('POST', '/api/v1/ota/check/', { token: world.deviceScopeToken, json: checkBody('download-device') });
    expect(offer.body.update_available).toBe(true);
    const issued = new URL(offer.body.url);
    expect((await fetch(issued)).status).toBe(200);

    const altered = (change: (url: URL) => void) => {
      const url = new URL(issued);
      change(url);
      return url;
    };
    const signature = issued.searchParams.get('signature')!;
    const variants: Record<string, URL> = {
      signature: altered((url) => url.searchParams.set('signature', `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`)),
      size: altered((url) => url.searchParams.set('size', String(Number(issued.searchParams.get('size')) + 1))),
      checksum: altered((url) => url.searchParams.set('sha256', 'ab'.repeat(32))),
      'no checksum': altered((url) => url.searchParams.delete('sha256')),
      expires: altered((url) => url.searchParams.set('expires', String(Number(issued.searchParams.get('expires')) + 3600))),
      artifact: altered((url) => (url.pathname = url.pathname.replace(release.body.artifact_id, world.artifactId))),
      'no signature': altered((url) => url.searchParams.delete('signature')),
      deployment: altered((url) => url.searchParams.set('deployment', world.deploymentId)),
      device: altered((url) => url.searchParams.set('device', 'someone-else')),
      token: altered((url) => url.searchParams.set('token', randomUUID())),
      'no offer': altered((url) => ['deployment', 'device', 'token'].forEach((part) => url.searchParams.delete(part))),
    };
    for (const [part, url] of Object.entries(variants)) {
      const response = await fetch(url);
      expect({ part, status: response.status }).toEqual({ part, status: 403 });
    }
    const key = testStack().gatewayEnv.OTA_URL_SIGNING_KEY ?? 'local-development-only-signing-key';
    const size = Number(issued.searchParams.get('size'));
    const offered = { deploymentId: issued.searchParams.get('deployment')!, deviceId: issued.searchParams.get('device')!, tokenId: issued.searchParams.get('token')! };
    const expired = new DownloadUrlSigner(key, 900).sign(issued.origin, { artifactId: release.body.artifact_id, size, sha256: issued.searchParams.get('sha256')!, offer: offered }, Date.now() - 3_600_000);
    const answer = await fetch(expired);
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { detail: string }).detail).toMatch(/expired/);
  });
});

/**
 * The scan below reads every document the run's tests have written before it, which jest's order
 * decides: in a clean-clone CI run that put the simulator's and the bench's files first, it read
 * for more than a minute. Only a guard against a hang.
 */
const WHOLE_STORE_SCAN_GUARD_MS = 600_000;

describe('secrets', () => {
  test('no database holds a raw token or a webhook secret: tokens are stored only as their SHA-256, secrets sealed', async () => {
    const world = await buildWorld();
    expect(world.webhookSecret.length).toBeGreaterThan(16);
    const raw = [world.user.token, world.apiToken, world.deviceScopeToken, world.deviceToken];
    await withDatabase(async (client) => {
      const prefix = String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, '');
      const { databases } = await client.db('admin').admin().listDatabases();
      const ours = databases.map((database) => database.name).filter((name) => name.startsWith(prefix));
      expect(ours.length).toBeGreaterThanOrEqual(5);
      let documents = 0;
      for (const name of ours) {
        for (const collection of await client.db(name).listCollections().toArray()) {
          // Large batches: a round trip per hundred documents would cost more than reading them.
          for await (const document of client.db(name).collection(collection.name).find({}, { batchSize: 5_000 })) {
            documents += 1;
            const text = JSON.stringify(document);
            for (const secret of [...raw, world.webhookSecret]) expect(text.includes(secret.slice(8))).toBe(false);
          }
        }
      }
      expect(documents).toBeGreaterThan(20);
      const tokens = client.db(`${prefix}gateway`).collection('tokens');
      for (const token of raw) expect(await tokens.countDocuments({ _id: createHash('sha256').update(token).digest('hex') } as never)).toBe(1);
    });
  }, WHOLE_STORE_SCAN_GUARD_MS);

  test('the audit trail names the token by its 12-character prefix only', async () => {
    const world = await buildWorld();
    const created = await api('POST', `/api/v1/projects/${world.project.id}/tokens/`, { token: world.apiToken, json: { name: 'audited', scope: 'device' } });
    const events = (await api('GET', `/api/v1/projects/${world.project.id}/audit/`, { token: world.user.token })).body as Array<Record<string, unknown>>;
    const text = JSON.stringify(events);
    for (const token of [world.user.token, world.apiToken, created.body.token, world.deviceToken]) expect(text.includes(token.slice(8))).toBe(false);
    const byApiToken = events.find((event) => event.action === 'token.created' && event.token_prefix === world.apiToken.slice(0, 12));
    expect(byApiToken).toBeDefined();
    for (const event of events) expect(String(event.token_prefix)).toHaveLength(12);
  });

  test('every raw token handed to a test is recorded, so that the end of the run can look for it in the logs', async () => {
    const world = await buildWorld();
    const recorded = readFileSync(testStack().issuedTokensFile, 'utf8');
    for (const token of [world.user.token, world.apiToken, world.deviceScopeToken, world.deviceToken]) expect(recorded).toContain(token);
  });
});

describe('slow clients', () => {
  test('a connection whose headers never finish is answered 408 and closed once HTTP_HEADERS_TIMEOUT_MS passes', async () => {
    const gateway = await startExtraGateway({ HTTP_HEADERS_TIMEOUT_MS: '1000' });
    try {
      const { port } = new URL(gateway.url);
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      socket.on('data', (data) => (answer += data.toString()));
      // Half a request: the headers never end.
      socket.write('POST /api/v1/ota/check/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
      await new Promise((resolve) => socket.once('close', resolve));
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      await gateway.stop();
    }
  });
});

describe('the console session on the device API', () => {
  test('is no credential there: a cookie-only check or report is 401, as the document says, with or without the CSRF token', async () => {
    const world = await buildWorld();
    const signIn = await fetch(`${testStack().gatewayUrl}/api/v1/session/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: world.user.token }) });
    expect(signIn.status).toBe(201);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const { csrf_token: csrf } = (await signIn.json()) as { csrf_token: string };
    for (const headers of [{ cookie }, { cookie, 'x-csrf-token': csrf }]) {
      const check = await api('POST', '/api/v1/ota/check/', { headers, json: checkBody('cookie-device') });
      expect(check.status).toBe(401);
      const report = await api('POST', '/api/v1/ota/status/', { headers, json: { device_id: 'cookie-device', deployment_id: world.deploymentId, event: 'offered' } });
      expect(report.status).toBe(401);
    }
  });
});

describe('forwarded headers and the download host', () => {
  test('a client that is not a trusted proxy cannot choose the download host or the cookie\'s Secure flag; a trusted proxy can', async () => {
    const world = await buildWorld();
    await api('POST', `/api/v1/projects/${world.project.id}/release/`, { token: world.user.token, body: uploadForm(MANIFEST, randomBinary(512)) });
    const spoofed = { 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'https' };
    const offerFrom = async (url: string) => {
      const response = await fetch(`${url}/api/v1/ota/check/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.deviceScopeToken}`, 'content-type': 'application/json', ...spoofed },
        body: JSON.stringify(checkBody(`fwd-${randomUUID()}`)),
      });
      return (await response.json()) as { url: string };
    };
    const signInFrom = async (url: string) =>
      (await fetch(`${url}/api/v1/session/`, { method: 'POST', headers: { 'content-type': 'application/json', ...spoofed }, body: JSON.stringify({ token: world.user.token }) })).headers.get('set-cookie') ?? '';

    // The test stack trusts no proxy: the headers are dropped.
    const direct = new URL(testStack().gatewayUrl);
    expect(new URL((await offerFrom(testStack().gatewayUrl)).url).host).toBe(direct.host);
    expect(await signInFrom(testStack().gatewayUrl)).not.toMatch(/secure/i);

    const behindProxy = await startExtraGateway({ TRUSTED_PROXIES: '127.0.0.1' });
    try {
      expect(new URL((await offerFrom(behindProxy.url)).url).host).toBe('attacker.example');
      expect(await signInFrom(behindProxy.url)).toMatch(/secure/i);
    } finally {
      await behindProxy.stop();
    }
  });

  test('a check over HTTP/1.0 without Host gets 400 rather than a URL with no host', async () => {
    const world = await buildWorld();
    await api('POST', `/api/v1/projects/${world.project.id}/release/`, { token: world.user.token, body: uploadForm(MANIFEST, randomBinary(512)) });
    const body = JSON.stringify(checkBody(`nohost-${randomUUID()}`));
    const { port } = new URL(testStack().gatewayUrl);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (data) => (answer += data.toString()));
    socket.write(
      `POST /api/v1/ota/check/ HTTP/1.0\r\nAuthorization: Bearer ${world.deviceScopeToken}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await new Promise((resolve) => socket.once('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('names no Host');
  });
});
