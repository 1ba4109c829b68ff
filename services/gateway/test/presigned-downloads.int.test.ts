import { createHash } from 'node:crypto';
import { MANIFEST, api, checkBody, randomBinary, setupProject, startExtraGateway, testStack, uploadForm, type ExtraGateway, type ProjectFixture } from '@ota/testkit';

// DOWNLOAD_URLS=presigned (docs/architecture.md, "The download"): the offer's URL is a presigned GET
// of the build in object storage, so the bytes never pass through our processes. The stack's s3rver
// stands in for S3; the test gateways share the stack's services and stores.

const SIZE = 200_000;
const binary = randomBinary(SIZE);
const sha256 = createHash('sha256').update(binary).digest('hex');

let presigning: ExtraGateway;
let shortLived: ExtraGateway;
let fixture: ProjectFixture;

beforeAll(async () => {
  [presigning, shortLived] = await Promise.all([
    startExtraGateway({ DOWNLOAD_URLS: 'presigned', OTA_URL_TTL_SECONDS: '600' }),
    startExtraGateway({ DOWNLOAD_URLS: 'presigned', OTA_URL_TTL_SECONDS: '1' }),
  ]);
  fixture = await setupProject();
  const release = await api('POST', `/api/v1/projects/${fixture.project.id}/release/`, { token: fixture.user.token, body: uploadForm(MANIFEST, binary) });
  expect(release.status).toBe(201);
});

afterAll(async () => {
  await Promise.all([presigning?.stop(), shortLived?.stop()]);
});

async function offerFrom(gateway: ExtraGateway, deviceId: string): Promise<{ url: string; checksum: string; size: number }> {
  const answer = await api('POST', `${gateway.url}/api/v1/ota/check/`, { token: fixture.deviceScopeToken, json: checkBody(deviceId) });
  expect(answer.status).toBe(200);
  expect(answer.body.update_available).toBe(true);
  return answer.body;
}

describe('an offer under DOWNLOAD_URLS=presigned', () => {
  it('points at the build in object storage, signed for OTA_URL_TTL_SECONDS', async () => {
    const offer = await offerFrom(presigning, 'presigned-1');
    const url = new URL(offer.url);
    expect(url.origin).toBe(new URL(testStack().s3Endpoint).origin);
    expect(url.pathname).toMatch(new RegExp(`/${fixture.project.id}/[0-9a-f-]{36}\\.bin$`));
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('600');
    expect(offer.checksum).toBe(sha256);
    expect(offer.size).toBe(SIZE);
  });

  it('is served by object storage: the whole build, and a range of it for a resumed download', async () => {
    const offer = await offerFrom(presigning, 'presigned-2');
    const whole = await fetch(offer.url);
    expect(whole.status).toBe(200);
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha256);

    const rest = await fetch(offer.url, { headers: { range: 'bytes=150000-' } });
    expect(rest.status).toBe(206);
    expect(rest.headers.get('content-range')).toBe(`bytes 150000-${SIZE - 1}/${SIZE}`);
    expect(Buffer.from(await rest.arrayBuffer()).equals(binary.subarray(150_000))).toBe(true);
  });

  it('stops working when it expires, and a new check gives one that works', async () => {
    const offer = await offerFrom(shortLived, 'presigned-3');
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await fetch(offer.url)).status).toBe(403);
    const renewed = await offerFrom(presigning, 'presigned-3');
    expect((await fetch(renewed.url, { headers: { range: 'bytes=0-9' } })).status).toBe(206);
  });

  it('leaves the default gateway handing out its own signed endpoint', async () => {
    const answer = await api('POST', '/api/v1/ota/check/', { token: fixture.deviceScopeToken, json: checkBody('presigned-4') });
    expect(new URL(answer.body.url).pathname).toMatch(/^\/api\/v1\/ota\/download\//);
  });
});
