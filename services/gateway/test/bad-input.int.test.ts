import { randomBytes, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { api, createUser, randomBinary, testStack, uploadForm } from '@ota/testkit';

const testStackUrl = () => testStack().gatewayUrl;

// Bad input on the first path is a 4xx with a `detail`, never a 5xx.

const manifest = { version_label: '1.0.0', framework: 'arduino', chip_family: 'esp32' };

let userToken: string;
let projectId: string;
let deviceToken: string;

beforeAll(async () => {
  userToken = createUser().token;
  projectId = (await api('POST', '/api/v1/projects/', { token: userToken, json: { name: 'bad input' } })).body.id;
  deviceToken = (await api('POST', `/api/v1/projects/${projectId}/tokens/`, { token: userToken, json: { name: 'd', scope: 'device' } })).body.token;
});

function expectDetail(response: { status: number; body: { detail?: unknown } }, status: number) {
  expect(response.status).toBe(status);
  expect(response.body.detail).toBeDefined();
}

describe('bad input on the first path', () => {
  it.each([
    ['no token', undefined],
    ['an unknown token', 'ota_pat_not-a-real-token'],
    ['a malformed header value', 'two words'],
  ])('answers 401 for %s', async (_name, token) => {
    expectDetail(await api('GET', '/api/v1/projects/', { token }), 401);
    expectDetail(await api('POST', '/api/v1/ota/check/', { token, json: {} }), 401);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const response = await api('POST', '/api/v1/ota/check/', {
      token: deviceToken,
      body: '{"device_id": ',
      headers: { 'content-type': 'application/json' },
    });
    expectDetail(response, 400);
  });

  it('answers 400 for a body that repeats a key, and changes nothing: the last one does not win', async () => {
    const artifact = (await api('POST', `/api/v1/projects/${projectId}/artifacts/`, { token: userToken, body: uploadForm(manifest, randomBinary(64)) })).body;
    const created = await api('POST', `/api/v1/projects/${projectId}/deployments/`, { token: userToken, json: { artifact_id: artifact.id, rollout_percentage: 10 } });
    expect(created.status).toBe(201);
    const transition = `/api/v1/projects/${projectId}/deployments/${created.body.id}/transition/`;
    // A deployment starts only with a device to reach.
    expect((await api('POST', '/api/v1/ota/check/', { token: deviceToken, json: { device_id: 'dup-0', framework: 'arduino', chip_family: 'esp32', current_build_number: 0 } })).status).toBe(200);
    expect((await api('POST', transition, { token: userToken, json: { action: 'start' } })).status).toBe(200);
    const twice = await api('POST', transition, {
      token: userToken,
      body: '{"action":"pause","rollout_percentage":50,"action":"ramp"}',
      headers: { 'content-type': 'application/json' },
    });
    expectDetail(twice, 400);
    expect(twice.body.detail).toMatch(/"action".*more than once/);
    const after = await api('GET', `/api/v1/projects/${projectId}/deployments/${created.body.id}/`, { token: userToken });
    expect(after.body).toMatchObject({ state: 'active', rollout_percentage: 10 });
    // The device API too, with the path to the key.
    const check = await api('POST', '/api/v1/ota/check/', {
      token: deviceToken,
      body: '{"device_id":"dup-1","framework":"arduino","chip_family":"esp32","current_build_number":0,"current_build_number":5}',
      headers: { 'content-type': 'application/json' },
    });
    expectDetail(check, 400);
  });

  it('answers 400 for a check body that misses required fields', async () => {
    expectDetail(await api('POST', '/api/v1/ota/check/', { token: deviceToken, json: { device_id: 'x' } }), 400);
  });

  it('answers 422 with an array detail for a project body with unknown keys', async () => {
    const response = await api('POST', '/api/v1/projects/', { token: userToken, json: { name: 'x', colour: 'blue' } });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'colour'], type: 'additionalProperties' })]);
  });

  it('answers 400 for a release without a manifest', async () => {
    const form = new FormData();
    form.append('binary', new Blob([randomBinary(10)]), 'fw.bin');
    expectDetail(await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: form }), 400);
  });

  it('answers 400 for a release without a binary', async () => {
    const form = new FormData();
    form.append('manifest', JSON.stringify(manifest));
    expectDetail(await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: form }), 400);
  });

  it('answers 400 for a manifest that is not JSON, or has unknown keys', async () => {
    const notJson = await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: uploadForm('{nope', randomBinary(10)) });
    expectDetail(notJson, 400);
    const unknownKey = await api('POST', `/api/v1/projects/${projectId}/release/`, {
      token: userToken,
      body: uploadForm({ ...manifest, flavour: 'x' }, randomBinary(10)),
    });
    expectDetail(unknownKey, 400);
    expect(unknownKey.body.detail).toContain('flavour');
  });

  it('answers 400 for a release to a channel that does not exist, and stores no artifact', async () => {
    const stored = async () => ((await api('GET', `/api/v1/projects/${projectId}/artifacts/`, { token: userToken })).body as unknown[]).length;
    const storedBefore = await stored();
    for (const size of [100, 300_000]) {
      const response = await api('POST', `/api/v1/projects/${projectId}/release/`, {
        token: userToken,
        body: uploadForm(manifest, randomBinary(size), { channel_name: 'nightly' }),
      });
      expectDetail(response, 400);
    }
    expect(await stored()).toBe(storedBefore);
    // The next successful release still gets the next build number: the refused one took none.
    const before = await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: uploadForm(manifest, randomBinary(100)) });
    const after = await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: uploadForm(manifest, randomBinary(100)) });
    expect(after.body.build_number).toBe(before.body.build_number + 1);
  });

  it('answers 400 for a release that is not multipart', async () => {
    expectDetail(await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, json: manifest }), 400);
  });

  it('answers 404 for a project id that is not a UUID or not the caller’s', async () => {
    expectDetail(await api('GET', '/api/v1/projects/not-a-uuid/', { token: userToken }), 404);
    const stranger = createUser();
    expectDetail(await api('GET', `/api/v1/projects/${projectId}/`, { token: stranger.token }), 404);
  });

  it('answers 401 when a device token calls the developer API, and 403 when a project token creates a project', async () => {
    expectDetail(await api('GET', `/api/v1/projects/${projectId}/`, { token: deviceToken }), 401);
    const apiToken = (await api('POST', `/api/v1/projects/${projectId}/tokens/`, { token: userToken, json: { name: 'ci', scope: 'api', role: 'admin' } })).body.token;
    expectDetail(await api('POST', '/api/v1/projects/', { token: apiToken, json: { name: 'x' } }), 403);
  });
});

// Each of these was a 500 found by the fuzzer (npm run test:fuzz) before the gateway refused it.
describe('input the stores cannot hold, refused before it reaches them', () => {
  it('refuses a NUL character anywhere in a developer body or query with 422 naming where', async () => {
    const named = await api('POST', '/api/v1/projects/', { token: userToken, json: { name: 'nul\u0000name' } });
    expect(named.status).toBe(422);
    expect(named.body.detail[0].loc).toEqual(['body', 'name']);
    const staff = createUser({ staff: true });
    const query = await api('GET', '/api/v1/users?email=a%00b@example.com', { token: staff.token });
    expect(query.status).toBe(422);
    expect(query.body.detail[0].loc).toEqual(['query', 'email']);
  });

  it('refuses an unpaired UTF-16 surrogate in a device body with 400', async () => {
    const response = await api('POST', '/api/v1/ota/status/', {
      token: deviceToken,
      body: '{"device_id": "d-1", "deployment_id": "00000000-0000-4000-8000-000000000000", "event": "x\\udbf5y"}',
      headers: { 'content-type': 'application/json' },
    });
    expectDetail(response, 400);
  });

  it.each([
    ['a key with a dot', { 'a.b': 1 }],
    ['a key starting with $', { $where: 1 }],
    ['an empty key', { '': 1 }],
    ['an array inside an array', { matrix: [[1, 2]] }],
    ['nesting deeper than four levels', { a: { b: { c: { d: { e: 1 } } } } }],
  ])('refuses device metadata with %s (422)', async (_name, metadata) => {
    const response = await api('POST', `/api/v1/projects/${projectId}/devices/`, { token: userToken, json: { device_id: `meta-${randomBytes(4).toString('hex')}`, metadata } });
    expect(response.status).toBe(422);
  });

  it('stores metadata of every allowed shape as given', async () => {
    const metadata = { site: 'plant-7', 'rack $2': { slot: 3, tags: ['a', { b: null }] }, ok: true };
    const created = await api('POST', `/api/v1/projects/${projectId}/devices/`, { token: userToken, json: { device_id: `meta-${randomBytes(4).toString('hex')}`, metadata } });
    expect(created.status).toBe(201);
    expect(created.body.metadata).toEqual(metadata);
  });

  it('refuses a build number beyond 2^31 - 1 and a since that names no date with 422/400', async () => {
    expectDetail(await api('POST', '/api/v1/ota/check/', { token: deviceToken, json: { device_id: 'd-1', framework: 'esp_idf', chip_family: 'esp32', current_build_number: 2 ** 31 } }), 400);
    const device = await api('POST', `/api/v1/projects/${projectId}/devices/`, { token: userToken, json: { device_id: `since-${randomBytes(4).toString('hex')}` } });
    const events = await api('GET', `/api/v1/projects/${projectId}/devices/${device.body.id}/check-events/?since=2026-13-45T00:00Z`, { token: userToken });
    expect(events.status).toBe(422);
    expect(events.body.detail[0].loc).toEqual(['query', 'since']);
  });

  it('answers 405 with Allow for a method a path does not take, and lists them for OPTIONS', async () => {
    // fetch refuses to send TRACE; node:http does not.
    const trace = await new Promise<{ status: number; allow: string; body: string }>((resolve, reject) => {
      const request = httpRequest(`${testStackUrl()}/api/v1/projects/`, { method: 'TRACE', headers: { authorization: `Bearer ${userToken}` } }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, allow: String(response.headers.allow), body }));
      });
      request.once('error', reject).end();
    });
    expect(trace.status).toBe(405);
    expect(trace.allow).toContain('POST');
    expect(JSON.parse(trace.body).detail).toBeTruthy();
    const put = await api('PUT', `/api/v1/projects/${projectId}/`, { token: userToken, json: {} });
    expectDetail(put, 405);
    const options = await fetch(`${testStackUrl()}/api/v1/projects/${projectId}/`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toMatch(/GET.*DELETE|DELETE.*GET/);
    // A path that names a route literally lists that route's methods, not those of a route whose
    // parameter the literal would fill (a group member called "changes").
    for (const literal of ['changes', 'bulk-changes']) {
      const named = await fetch(`${testStackUrl()}/api/v1/projects/${projectId}/groups/${randomUUID()}/members/${literal}/`, { method: 'OPTIONS' });
      expect([literal, named.status, named.headers.get('allow')]).toEqual([literal, 204, expect.not.stringContaining('DELETE')]);
    }
  });

  it('answers 400 with a detail to a request line or headers that HTTP/1.1 does not allow', async () => {
    // Raw requests: no HTTP client sends these.
    const raw = (text: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(testStackUrl());
        const socket = connect(Number(url.port), url.hostname, () => socket.write(text));
        let answer = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => {
          answer += chunk;
          const [head, body = ''] = answer.split('\r\n\r\n');
          const length = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1] ?? NaN);
          if (Buffer.byteLength(body) >= length) {
            socket.destroy();
            resolve({ status: Number(answer.split(' ')[1]), body });
          }
        });
        socket.once('error', reject);
      });
    const host = new URL(testStackUrl()).host;
    const health = (requestLine: string, headers: string) => raw(`${requestLine}\r\nHost: ${host}\r\n${headers}Connection: close\r\n\r\n`);
    // The same request, allowed, answers.
    expect((await health('GET /api/v1/openapi.json HTTP/1.1', '')).status).toBe(200);
    for (const [name, request] of [
      ['two Host headers', health('GET /api/v1/openapi.json HTTP/1.1', 'Host: elsewhere.example\r\n')],
      ['HTTP/2.0 in an HTTP/1.1 request line', health('GET /api/v1/openapi.json HTTP/2.0', '')],
      ['a transfer coding other than chunked', raw(`POST /api/v1/ota/check/ HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`)],
    ] as const) {
      const answer = await request;
      expect({ name, status: answer.status }).toEqual({ name, status: 400 });
      expect(JSON.parse(answer.body).detail).toBeTruthy();
    }

    // A Host that is no authority (RFC 9112 §3.2) is 400: offer URLs are made from it when no
    // PUBLIC_BASE_URL is set, and must never carry a path, a user or a second host.
    const withHost = (value: string) => raw(`GET /api/v1/openapi.json HTTP/1.1\r\nHost: ${value}\r\nConnection: close\r\n\r\n`);
    for (const value of ['a.invalid/x?y=', 'a.invalid@b.invalid', 'a.invalid, b.invalid', 'a.invalid\tb', 'a.invalid:99999', 'a.invalid:', '-a.invalid', '[zz::1]']) {
      const answer = await withHost(value);
      expect({ value, status: answer.status }).toEqual({ value, status: 400 });
      expect(JSON.parse(answer.body).detail).toMatch(/Host/);
    }
    for (const value of [host, 'localhost', 'ota.example.com:8443', '10.0.0.7', '[::1]:8080', 'gateway_internal']) {
      expect({ value, status: (await withHost(value)).status }).toEqual({ value, status: 200 });
    }

    // What Node's parser cannot read is 400 with a detail too, not an empty answer; an HTTP/1.0
    // request with Transfer-Encoding is refused and its connection closed (RFC 9112 §6.1); paths
    // are matched as written.
    const unreadable: Array<[string, string, number]> = [
      ['a request line without a version', `GET /api/v1/openapi.json\r\nHost: ${host}\r\n\r\n`, 400],
      ['a method with a character no token holds', `GE@T /api/v1/openapi.json HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 400],
      ['a Transfer-Encoding value with a space inside', `POST /api/v1/ota/check/ HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chun ked\r\n\r\n0\r\n\r\n`, 400],
      ['a chunk size that is not hex', `POST /api/v1/ota/check/ HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400],
      ['HTTP/1.0 with Transfer-Encoding', `POST /api/v1/ota/check/ HTTP/1.0\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, 400],
      ['a path in other letters', `GET /API/V1/openapi.json HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, 404],
    ];
    for (const [name, text, status] of unreadable) {
      const answer = await raw(text);
      expect({ name, status: answer.status }).toEqual({ name, status });
      expect(JSON.parse(answer.body).detail).toBeTruthy();
    }
  });
});
