import { randomBytes } from 'node:crypto';
import { api, createUser, uploadForm } from '@ota/testkit';

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
    form.append('binary', new Blob([randomBytes(10)]), 'fw.bin');
    expectDetail(await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: form }), 400);
  });

  it('answers 400 for a release without a binary', async () => {
    const form = new FormData();
    form.append('manifest', JSON.stringify(manifest));
    expectDetail(await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: form }), 400);
  });

  it('answers 400 for a manifest that is not JSON, or has unknown keys', async () => {
    const notJson = await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: uploadForm('{nope', randomBytes(10)) });
    expectDetail(notJson, 400);
    const unknownKey = await api('POST', `/api/v1/projects/${projectId}/release/`, {
      token: userToken,
      body: uploadForm({ ...manifest, flavour: 'x' }, randomBytes(10)),
    });
    expectDetail(unknownKey, 400);
    expect(unknownKey.body.detail).toContain('flavour');
  });

  it('answers 400 for a release to a channel that does not exist, and stores no artifact', async () => {
    const response = await api('POST', `/api/v1/projects/${projectId}/release/`, {
      token: userToken,
      body: uploadForm(manifest, randomBytes(100), { channel_name: 'nightly' }),
    });
    expectDetail(response, 400);
    // The next successful release still gets the next build number: the refused one took none.
    const before = await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: uploadForm(manifest, randomBytes(100)) });
    const after = await api('POST', `/api/v1/projects/${projectId}/release/`, { token: userToken, body: uploadForm(manifest, randomBytes(100)) });
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
    const apiToken = (await api('POST', `/api/v1/projects/${projectId}/tokens/`, { token: userToken, json: { name: 'ci', scope: 'api' } })).body.token;
    expectDetail(await api('POST', '/api/v1/projects/', { token: apiToken, json: { name: 'x' } }), 403);
  });
});
