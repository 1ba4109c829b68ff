import { createHash } from 'node:crypto';
import { MANIFEST, api, checkBody, randomBinary, setupProject, testStack, uploadForm } from '@ota/testkit';
import { DownloadUrlSigner } from '../src/http/download-url';

// The download's resume contract (docs/api.md, "Resuming a download"), on the real stack: ranges
// read from S3 through artifacts, ETag and If-Range, 416, and a download resumed with a new URL
// after the first one expired.

const SIZE = 300_000;
const binary = randomBinary(SIZE);
const sha256 = createHash('sha256').update(binary).digest('hex');

let offer: { url: string; checksum: string; size: number; build_number: number };
let checkAgain: () => Promise<typeof offer>;

beforeAll(async () => {
  const f = await setupProject();
  const release = await api('POST', `/api/v1/projects/${f.project.id}/release/`, { token: f.user.token, body: uploadForm(MANIFEST, binary) });
  expect(release.status).toBe(201);
  checkAgain = async () => {
    const answer = await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('ranger') });
    expect(answer.body.update_available).toBe(true);
    return answer.body;
  };
  offer = await checkAgain();
});

async function download(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  const bytes = Buffer.from(await response.arrayBuffer());
  // Every status the download answers is one its OpenAPI operation lists.
  await api('GET', url, { headers }).then((checked) => expect(checked.status).toBe(response.status));
  return { status: response.status, headers: response.headers, bytes };
}

describe('a download', () => {
  it('sends the whole build with Accept-Ranges, Content-Length and a strong ETag of its SHA-256', async () => {
    expect(offer.checksum).toBe(sha256);
    const whole = await download(offer.url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(whole.headers.get('etag')).toBe(`"${sha256}"`);
    expect(whole.headers.get('content-length')).toBe(String(SIZE));
    expect(whole.bytes.equals(binary)).toBe(true);
  });

  it.each([
    ['the start', 'bytes=0-99', 0, 99],
    ['the middle', 'bytes=100000-165535', 100_000, 165_535],
    ['the end', `bytes=${SIZE - 10}-${SIZE - 1}`, SIZE - 10, SIZE - 1],
    ['an open range', 'bytes=250000-', 250_000, SIZE - 1],
    ['a range past the end, cut to it', `bytes=${SIZE - 5}-${SIZE + 1000}`, SIZE - 5, SIZE - 1],
    ['the last bytes (a suffix)', 'bytes=-1000', SIZE - 1000, SIZE - 1],
  ])('answers %s with 206 and exactly those bytes', async (_name, range, start, end) => {
    const part = await download(offer.url, { range });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes ${start}-${end}/${SIZE}`);
    expect(part.headers.get('content-length')).toBe(String(end - start + 1));
    expect(part.headers.get('etag')).toBe(`"${sha256}"`);
    expect(part.bytes.equals(binary.subarray(start, end + 1))).toBe(true);
  });

  it('answers 400, as the device API does, to query text no store could hold', async () => {
    const junk = await download(`${offer.url}&%02=%00`);
    expect(junk.status).toBe(400);
    expect(JSON.parse(junk.bytes.toString()).detail).toMatch(/NUL/);
  });

  it('answers 416 with the size for a range that starts past the end', async () => {
    const refused = await download(offer.url, { range: `bytes=${SIZE}-` });
    expect(refused.status).toBe(416);
    expect(refused.headers.get('content-range')).toBe(`bytes */${SIZE}`);
    expect(JSON.parse(refused.bytes.toString()).detail).toMatch(/range/);
  });

  it('sends the whole build when If-Range names a stale tag, and the range when it names this build', async () => {
    const stale = await download(offer.url, { range: 'bytes=1000-', 'if-range': `"${'0'.repeat(64)}"` });
    expect(stale.status).toBe(200);
    expect(stale.bytes.equals(binary)).toBe(true);
    const current = await download(offer.url, { range: 'bytes=1000-', 'if-range': `"${sha256}"` });
    expect(current.status).toBe(206);
    expect(current.bytes.equals(binary.subarray(1000))).toBe(true);
  });

  it('resumes with the URL of a new check after the first expired: same ETag, and the bytes hash to the checksum', async () => {
    // The first URL delivered the first 123,456 bytes, then expired.
    const cut = 123_456;
    const head = await download(offer.url, { range: `bytes=0-${cut - 1}` });
    expect(head.status).toBe(206);
    const first = new URL(offer.url);
    const key = testStack().gatewayEnv.OTA_URL_SIGNING_KEY ?? 'local-development-only-signing-key';
    const offered = { deploymentId: first.searchParams.get('deployment')!, deviceId: first.searchParams.get('device')!, tokenId: first.searchParams.get('token')! };
    const expired = new DownloadUrlSigner(key, 900).sign(first.origin, { artifactId: first.pathname.split('/').pop()!, size: SIZE, sha256, offer: offered }, Date.now() - 3_600_000);
    expect((await download(expired, { range: `bytes=${cut}-` })).status).toBe(403);

    const again = await checkAgain();
    expect(again.build_number).toBe(offer.build_number);
    const tail = await download(again.url, { range: `bytes=${cut}-`, 'if-range': head.headers.get('etag')! });
    expect(tail.status).toBe(206);
    expect(tail.headers.get('etag')).toBe(head.headers.get('etag'));
    const resumed = Buffer.concat([head.bytes, tail.bytes]);
    expect(createHash('sha256').update(resumed).digest('hex')).toBe(again.checksum);
  });

  it('answers HEAD with the headers GET would send, and reads nothing of the build for it', async () => {
    const streamsRead = async () => {
      const text = await (await fetch(testStack().metricsUrls.artifacts!)).text();
      // Every ReadArtifactBinary the artifacts service started.
      return [...text.matchAll(/grpc_server_started_total\{[^}]*grpc_method="readArtifactBinary"[^}]*\} (\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    };
    const before = await streamsRead();
    for (let i = 0; i < 20; i += 1) {
      const whole = await fetch(offer.url, { method: 'HEAD' });
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-length')).toBe(String(SIZE));
      expect(whole.headers.get('etag')).toBe(`"${sha256}"`);
      expect(whole.headers.get('accept-ranges')).toBe('bytes');
      expect((await whole.arrayBuffer()).byteLength).toBe(0);
    }
    const part = await fetch(offer.url, { method: 'HEAD', headers: { range: 'bytes=1000-' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1000-${SIZE - 1}/${SIZE}`);
    expect(part.headers.get('content-length')).toBe(String(SIZE - 1000));
    const altered = new URL(offer.url);
    altered.searchParams.set('size', String(SIZE + 1));
    expect((await fetch(altered, { method: 'HEAD' })).status).toBe(403);
    // A GET is counted (the metric is the right one); the 21 HEADs and the refused one were not.
    expect((await download(offer.url, { range: 'bytes=0-9' })).status).toBe(206);
    expect(await streamsRead()).toBe(before + 2);
  });
});
