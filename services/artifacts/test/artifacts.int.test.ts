import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { MANIFEST, api, checkBody, randomBinary, setupProject, startExtraGateway, uploadForm, type ExtraGateway, type ProjectFixture } from '@ota/testkit';

let f: ProjectFixture;
const path = (suffix = '') => `/api/v1/projects/${f.project.id}${suffix}`;
const upload = (manifest: unknown, binary: Buffer, project = f) =>
  api('POST', `/api/v1/projects/${project.project.id}/artifacts/`, { token: project.user.token, body: uploadForm(manifest, binary) });

beforeAll(async () => {
  f = await setupProject({ name: 'artifacts', maxUploadsPerMonth: 0 });
});

describe('artifact upload', () => {
  it('stores the binary, computes its SHA-256 and answers the artifact', async () => {
    const binary = randomBinary(100_000);
    const created = await upload({ ...MANIFEST, board_id: 'devkit-c', min_nvs_schema_version: 2, release_notes: 'first' }, binary);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      version_label: '1.0.0',
      framework: 'esp_idf',
      chip_family: 'esp32',
      board_id: 'devkit-c',
      min_nvs_schema_version: 2,
      checksum_sha256: createHash('sha256').update(binary).digest('hex'),
      file_size: binary.length,
      archived: false,
    });
    const listed = await api('GET', path('/artifacts/'), { token: f.apiToken });
    expect(listed.body[0].id).toBe(created.body.id);
  });

  it('assigns build numbers without gaps or repeats under concurrent uploads', async () => {
    const g = await setupProject({ maxUploadsPerMonth: 0 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => upload(MANIFEST, randomBinary(2_000), g)));
    expect(answers.every((answer) => answer.status === 201)).toBe(true);
    expect(answers.map((answer) => answer.body.build_number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('never lets concurrent uploads overshoot the monthly cap, counting releases too', async () => {
    const g = await setupProject({ maxUploadsPerMonth: 4 });
    const release = await api('POST', `/api/v1/projects/${g.project.id}/release/`, { token: g.user.token, body: uploadForm(MANIFEST, randomBinary(100)) });
    expect(release.status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 8 }, () => upload(MANIFEST, randomBinary(1_000), g)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(3);
    const refused = answers.filter((answer) => answer.status === 400);
    expect(refused).toHaveLength(5);
    expect(refused[0]!.body.detail).toContain('monthly artifact upload limit');
  });

  it.each([
    ['missing required keys', { version_label: '1' }, 'framework'],
    ['an unknown framework', { ...MANIFEST, framework: 'zephyr' }, 'framework'],
    ['a negative NVS version', { ...MANIFEST, min_nvs_schema_version: -1 }, 'min_nvs_schema_version'],
    ['an unknown key', { ...MANIFEST, colour: 'red' }, 'colour'],
  ])('refuses a manifest with %s, naming it', async (_name, manifest, named) => {
    const refused = await upload(manifest, randomBinary(10));
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain(named);
  });

  it('refuses an empty binary', async () => {
    expect((await upload(MANIFEST, Buffer.alloc(0))).status).toBe(400);
  });
});

describe('archiving', () => {
  it('is refused while a draft, active or paused deployment uses the build, with the count', async () => {
    const artifact = (await upload(MANIFEST, randomBinary(100))).body;
    const deploy = () => api('POST', path('/deployments/'), { token: f.user.token, json: { artifact_id: artifact.id, target_channel_ids: [f.defaultChannelId] } });
    const first = await deploy();
    const second = await deploy();
    const refused = await api('PATCH', path(`/artifacts/${artifact.id}/`), { token: f.user.token, json: { archived: true } });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/^2 draft, active or paused/);
    for (const deployment of [first, second]) {
      await api('POST', path(`/deployments/${deployment.body.id}/transition/`), { token: f.user.token, json: { action: 'cancel' } });
    }
    const archived = await api('PATCH', path(`/artifacts/${artifact.id}/`), { token: f.user.token, json: { archived: true } });
    expect(archived.body.archived).toBe(true);
    expect((await deploy()).status).toBe(400);
    expect((await api('PATCH', path(`/artifacts/${artifact.id}/`), { token: f.user.token, json: { archived: false } })).body.archived).toBe(false);
    expect((await api('PATCH', path(`/artifacts/${artifact.id}/`), { token: f.user.token, json: { archived: false, name: 'x' } })).status).toBe(422);
  });

  it('stops an archived build from being offered', async () => {
    const g = await setupProject();
    const release = await api('POST', `/api/v1/projects/${g.project.id}/release/`, { token: g.user.token, body: uploadForm(MANIFEST, randomBinary(50)) });
    await api('POST', `/api/v1/projects/${g.project.id}/deployments/${release.body.deployment_id}/transition/`, { token: g.user.token, json: { action: 'complete' } });
    // A completed deployment offers nothing; reactivate the build through a new deployment, then archive is refused.
    expect((await api('PATCH', `/api/v1/projects/${g.project.id}/artifacts/${release.body.artifact_id}/`, { token: g.user.token, json: { archived: true } })).status).toBe(200);
    const check = await api('POST', '/api/v1/ota/check/', { token: g.deviceScopeToken, json: checkBody('arch-1') });
    expect(check.body.update_available).toBe(false);
  });
});

describe('signed builds', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);

  it('verify against the project keys, and offers carry the signature and key id', async () => {
    const g = await setupProject();
    const keys = `/api/v1/projects/${g.project.id}/signing-keys/`;
    const binary = randomBinary(5_000);
    const signature = sign(null, binary, privateKey).toString('base64');

    const noKeys = await upload({ ...MANIFEST, signature }, binary, g);
    expect(noKeys.status).toBe(400);
    expect(noKeys.body.detail).toContain('no signing keys');

    const key = await api('POST', keys, { token: g.user.token, json: { name: 'release key', public_key: pem } });
    expect(key.status).toBe(201);
    expect(key.body.fingerprint).toBe(createHash('sha256').update(raw).digest('hex'));
    expect((await api('POST', keys, { token: g.user.token, json: { name: 'same, as raw bytes', public_key: raw.toString('base64') } })).status).toBe(409);
    expect((await api('POST', keys, { token: g.user.token, json: { name: 'junk', public_key: 'bm90IGEga2V5' } })).status).toBe(400);

    const forged = await upload({ ...MANIFEST, signature: sign(null, randomBytes(10), privateKey).toString('base64') }, binary, g);
    expect(forged.status).toBe(400);
    expect(forged.body.detail).toContain('does not verify');

    const release = await api('POST', `/api/v1/projects/${g.project.id}/release/`, { token: g.user.token, body: uploadForm({ ...MANIFEST, signature }, binary) });
    expect(release.status).toBe(201);
    const offer = await api('POST', '/api/v1/ota/check/', { token: g.deviceScopeToken, json: checkBody('signed-1') });
    expect(offer.body).toMatchObject({ update_available: true, signature, signing_key_id: key.body.id });

    expect((await api('GET', keys, { token: g.apiToken })).body).toEqual([key.body]);
    expect((await api('DELETE', `${keys}${key.body.id}/`, { token: g.user.token })).status).toBe(204);
    expect((await api('GET', keys, { token: g.apiToken })).body).toEqual([]);
  });
});

describe('memory while uploading', () => {
  // A gateway of its own: the shared one serves the other test files at the same time, and
  // their requests would count against this budget.
  let gateway: ExtraGateway;
  beforeAll(async () => {
    gateway = await startExtraGateway({});
  }, 90_000);
  afterAll(() => gateway?.stop());

  it("streams a 500 MiB upload without raising the gateway's resident memory by more than 64 MiB", async () => {
    const residentMemory = async () => {
      const text = await (await fetch(gateway.metricsUrl)).text();
      return Number(/^process_resident_memory_bytes\{[^}]*\} (\d+)/m.exec(text)![1]);
    };
    // One small upload first, so that what a fresh process loads on its first upload
    // (code, connections, buffers) is in the baseline rather than in the growth.
    const warmUp = await api('POST', `${gateway.url}${path('/artifacts/')}`, { token: f.user.token, body: uploadForm({ ...MANIFEST, version_label: '0.0.1' }, randomBinary(1024 * 1024)) });
    expect(warmUp.status).toBe(201);
    const total = 500 * 1024 * 1024;
    const piece = randomBinary(1024 * 1024);
    const before = await residentMemory();
    let peak = before;
    const sampler = setInterval(() => {
      residentMemory().then((rss) => (peak = Math.max(peak, rss)), () => undefined);
    }, 200);
    // A multipart body built as a stream: the test holds one MiB, never the whole file.
    const boundary = 'ota-memory-test';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="manifest"\r\n\r\n${JSON.stringify(MANIFEST)}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="binary"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const body = new ReadableStream({
      sent: 0,
      start(controller) {
        controller.enqueue(head);
      },
      pull(controller) {
        const self = this as unknown as { sent: number };
        if (self.sent >= total) {
          controller.enqueue(tail);
          controller.close();
          return;
        }
        controller.enqueue(piece);
        self.sent += piece.length;
      },
    } as UnderlyingDefaultSource<Uint8Array> & { sent: number });
    try {
      const response = await fetch(`${gateway.url}${path('/artifacts/')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${f.user.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
        duplex: 'half',
      } as RequestInit);
      const artifact = (await response.json()) as { file_size: number };
      expect(response.status).toBe(201);
      expect(artifact.file_size).toBe(total);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, await residentMemory());
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  }, 300_000);
});
