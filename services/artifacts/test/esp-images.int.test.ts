import { randomBytes } from 'node:crypto';
import { api, checkBody, createUser, esptoolImageInfo, eventually, grantRole, makeEspImage, randomBinary, setupProject, uploadForm, WebhookReceiver, type ProjectFixture } from '@ota/testkit';

// ESP-IDF application images read at upload and respected at the check (docs/api.md, "The image"),
// with images made by esptool from an ELF Debian's RISC-V compiler linked for the ESP32-C3.

const C3 = { version_label: '1.0.0', framework: 'esp_idf', chip_family: 'esp32c3' } as const;

let f: ProjectFixture;
const projectPath = () => `/api/v1/projects/${f.project.id}`;
const upload = (manifest: unknown, binary: Buffer) => api('POST', `${projectPath()}/artifacts/`, { token: f.user.token, body: uploadForm(manifest, binary) });
const buildNumbers = async () => ((await api('GET', `${projectPath()}/artifacts/`, { token: f.user.token })).body as Array<{ build_number: number }>).map((a) => a.build_number).sort((a, b) => a - b);

beforeAll(async () => {
  f = await setupProject({ name: 'esp images', maxUploadsPerMonth: 0 });
});

describe('an image at upload', () => {
  it('keeps what the image says of itself, as esptool image-info reads it', async () => {
    const binary = makeEspImage({ secureVersion: 0, version: '2.4.1', minChipRevision: 3, maxChipRevision: 199 });
    const created = await upload(C3, binary);
    expect(created.status).toBe(201);
    expect(created.body.image).toEqual(esptoolImageInfo(binary));
    expect(created.body.image).toMatchObject({ chip: 'esp32c3', chip_id: 5, version: '2.4.1', min_chip_revision: 3, max_chip_revision: 199, hash_appended: true });
    expect(created.body.secure_version_raise).toBeNull();
    const listed = (await api('GET', `${projectPath()}/artifacts/`, { token: f.user.token })).body as Array<{ id: string; image: unknown }>;
    expect(listed.find((a) => a.id === created.body.id)!.image).toEqual(created.body.image);
  });

  it('stores bytes that are not an image as they are, with image null', async () => {
    const binary = randomBytes(4096);
    binary[0] = 0x00;
    const created = await upload(C3, binary);
    expect(created.status).toBe(201);
    expect(created.body.image).toBeNull();
  });

  it('matches the chip names a manifest may spell', async () => {
    expect((await upload({ ...C3, chip_family: 'ESP32-C3' }, makeEspImage())).status).toBe(201);
  });

  describe('refuses with 400, storing nothing and taking no build number', () => {
    const image = () => Buffer.from(makeEspImage());
    const refusals: Array<[string, () => { manifest: unknown; binary: Buffer }, RegExp]> = [
      ['an image for another chip than the manifest names', () => ({ manifest: { ...C3, chip_family: 'esp32s3' }, binary: image() }), /built for esp32c3 .*chip_family is "esp32s3"/],
      [
        'a checksum that does not match',
        () => {
          const binary = Buffer.from(makeEspImage({ appendHash: false }));
          binary[400]! ^= 0xff;
          return { manifest: C3, binary };
        },
        /checksum does not match/,
      ],
      [
        'an appended SHA-256 that does not match',
        () => {
          const binary = image();
          binary[binary.length - 3]! ^= 0x10;
          return { manifest: C3, binary };
        },
        /appended SHA-256 does not match/,
      ],
      [
        '255 segments',
        () => {
          const binary = image();
          binary[1] = 255;
          return { manifest: C3, binary };
        },
        /declares 255 segments/,
      ],
      ['a truncated header', () => ({ manifest: C3, binary: image().subarray(0, 20) }), /header is cut short/],
      ['a first segment without an app descriptor', () => ({ manifest: C3, binary: makeEspImage({ descriptorMagic: 0x1 }) }), /no app descriptor/],
    ];

    it.each(refusals)('%s', async (_name, make, detail) => {
      const before = await buildNumbers();
      const { manifest, binary } = make();
      const refused = await upload(manifest, binary);
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(detail);
      expect(await buildNumbers()).toEqual(before);
      // The next upload takes the next number: none was burnt.
      const next = await upload(C3, randomBinary(64));
      expect(next.body.build_number).toBe(Math.max(0, ...before) + 1);
    });
  });

  it('refuses the bad among parallel uploads and numbers the good without a gap', async () => {
    const before = await buildNumbers();
    const bad = Buffer.from(makeEspImage());
    bad[1] = 200;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => upload(C3, i % 2 === 0 ? makeEspImage({ version: `p-${i}` }) : bad)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(5).fill(201), ...Array(5).fill(400)]);
    const numbers = await buildNumbers();
    expect(numbers.slice(before.length)).toEqual([1, 2, 3, 4, 5].map((n) => n + Math.max(0, ...before)));
  });
});

describe("a project's require_esp_image setting", () => {
  it('refuses other bytes while it is on, set by an admin alone and audited', async () => {
    const p = await setupProject({ name: 'images only', maxUploadsPerMonth: 0 });
    const path = `/api/v1/projects/${p.project.id}`;
    const send = (binary: Buffer) => api('POST', `${path}/artifacts/`, { token: p.user.token, body: uploadForm(C3, binary) });
    expect((await api('GET', `${path}/`, { token: p.user.token })).body.require_esp_image).toBe(false);
    const person = createUser();
    await grantRole(p, person, 'approver');
    expect((await api('PATCH', `${path}/`, { token: person.token, json: { require_esp_image: true } })).status).toBe(403);
    expect((await api('PATCH', `${path}/`, { token: p.user.token, json: {} })).status).toBe(422);

    const on = await api('PATCH', `${path}/`, { token: p.user.token, json: { require_esp_image: true } });
    expect(on.status).toBe(200);
    expect(on.body.require_esp_image).toBe(true);
    const refused = await send(randomBinary(2048));
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/takes ESP-IDF application images only .*does not start with 0xE9/);
    expect((await send(makeEspImage())).status).toBe(201);

    expect((await api('PATCH', `${path}/`, { token: p.user.token, json: { require_esp_image: false } })).body.require_esp_image).toBe(false);
    expect((await send(randomBinary(2048))).status).toBe(201);
    const audit = (await api('GET', `${path}/audit/?action=project.settings_changed`, { token: p.user.token })).body as Array<{ details: unknown }>;
    expect(audit.map((event) => event.details)).toEqual([{ require_esp_image: false }, { require_esp_image: true }]);
  });
});

describe('a raise of secure_version', () => {
  it('is said of the first build above every earlier one for its chip', async () => {
    const p = await setupProject({ name: 'raises', maxUploadsPerMonth: 0 });
    const send = async (secureVersion: number) =>
      (await api('POST', `/api/v1/projects/${p.project.id}/artifacts/`, { token: p.user.token, body: uploadForm(C3, makeEspImage({ secureVersion })) })).body;
    expect((await send(0)).secure_version_raise).toBeNull();
    expect((await send(2)).secure_version_raise).toEqual({ from: 0, to: 2, efuse_bits_left: 14 });
    expect((await send(2)).secure_version_raise).toBeNull();
    expect((await send(1)).secure_version_raise).toBeNull();
    expect((await send(3)).secure_version_raise).toEqual({ from: 2, to: 3, efuse_bits_left: 13 });
  });
});

describe('deploying a raise of secure_version', () => {
  const receivers: WebhookReceiver[] = [];
  afterAll(() => Promise.all(receivers.map((receiver) => receiver.close())));
  let p: ProjectFixture;
  let operatorToken: string;
  const path = () => `/api/v1/projects/${p.project.id}`;
  const deploy = (token: string, artifactId: string, extra: object = {}) =>
    api('POST', `${path()}/deployments/`, { token, json: { artifact_id: artifactId, target_channel_ids: [p.defaultChannelId], ...extra } });
  const release = (token: string, secureVersion: number, fields: Record<string, string> = {}) =>
    api('POST', `${path()}/release/`, { token, body: uploadForm(C3, makeEspImage({ secureVersion, version: `r-${secureVersion}` }), fields) });
  const builds = async () => ((await api('GET', `${path()}/artifacts/`, { token: p.user.token })).body as unknown[]).length;

  beforeAll(async () => {
    p = await setupProject({ name: 'raise deploys', maxUploadsPerMonth: 0 });
    const person = createUser();
    await grantRole(p, person, 'operator');
    operatorToken = person.token;
  });

  it('needs acknowledge_secure_version_raise, and an approver; a webhook hears of it', async () => {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const hook = await api('POST', `${path()}/webhooks/`, { token: p.user.token, json: { url: receiver.url, events: ['deployment.secure_version_raised'] } });
    expect(hook.status).toBe(201);
    const first = (await api('POST', `${path()}/artifacts/`, { token: p.user.token, body: uploadForm(C3, makeEspImage({ secureVersion: 0 })) })).body;
    const raising = (await api('POST', `${path()}/artifacts/`, { token: p.user.token, body: uploadForm(C3, makeEspImage({ secureVersion: 1 })) })).body;
    expect(raising.secure_version_raise).toEqual({ from: 0, to: 1, efuse_bits_left: 15 });

    // A build that raises nothing needs no acknowledgment, from an operator either.
    expect((await deploy(operatorToken, first.id)).status).toBe(201);
    const unacknowledged = await deploy(p.user.token, raising.id);
    expect(unacknowledged.status).toBe(400);
    expect(unacknowledged.body.detail).toMatch(/raises secure_version from 0 to 1: every device that confirms it burns eFuse bits .*cannot be undone/);
    const byOperator = await deploy(operatorToken, raising.id, { acknowledge_secure_version_raise: true });
    expect(byOperator.status).toBe(403);
    expect(byOperator.body.detail).toMatch(/needs the approver role/);

    const acknowledged = await deploy(p.user.token, raising.id, { acknowledge_secure_version_raise: true });
    expect(acknowledged.status).toBe(201);
    const audit = (await api('GET', `${path()}/audit/?action=deployment.created`, { token: p.user.token })).body as Array<{ target_id: string; details: Record<string, unknown> }>;
    expect(audit.find((event) => event.target_id === acknowledged.body.id)!.details).toMatchObject({ secure_version_raise: { from: 0, to: 1, efuse_bits_left: 15 } });
    // The deployment of the build that raises nothing was not sent.
    const delivered = await eventually(async () => receiver.accepted(), (deliveries) => deliveries.length >= 1, 20_000);
    expect(delivered.map((delivery) => JSON.parse(delivery.body))).toMatchObject([
      { event: 'deployment.secure_version_raised', kinds: ['deployment.created', 'deployment.secure_version_raised'], audit_event: { target_id: acknowledged.body.id, details: { secure_version_raise: { to: 1 } } } },
    ]);
  });

  it('refuses a release that raises it unacknowledged, storing nothing', async () => {
    const before = await builds();
    const refused = await release(p.user.token, 5);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/raises secure_version from 1 to 5/);
    expect(await builds()).toBe(before);
    const byOperator = await release(operatorToken, 5, { acknowledge_secure_version_raise: 'true' });
    expect(byOperator.status).toBe(403);
    expect(byOperator.body.detail).toMatch(/needs the approver role/);
    expect(await builds()).toBe(before);

    const released = await release(p.user.token, 5, { acknowledge_secure_version_raise: 'true' });
    expect(released.status).toBe(201);
    const audit = (await api('GET', `${path()}/audit/?action=release.created`, { token: p.user.token })).body as Array<{ target_id: string; details: Record<string, unknown> }>;
    expect(audit.find((event) => event.target_id === released.body.deployment_id)!.details).toMatchObject({ secure_version_raise: { from: 1, to: 5, efuse_bits_left: 11 } });
    // The same secure version again raises nothing.
    expect((await release(operatorToken, 5)).status).toBe(201);
  });
});

describe('the check', () => {
  // A release for chip revisions v0.3 to v1.99 with anti-rollback version 2, to every device.
  let release: { artifact_id: string; deployment_id: string };
  let p: ProjectFixture;
  const check = (deviceId: string, extra: Record<string, unknown>) =>
    api('POST', '/api/v1/ota/check/', { token: p.deviceScopeToken, json: checkBody(deviceId, { chip_family: 'esp32c3', ...extra }) });

  beforeAll(async () => {
    p = await setupProject({ name: 'image checks', maxUploadsPerMonth: 0 });
    const released = await api('POST', `/api/v1/projects/${p.project.id}/release/`, {
      token: p.user.token,
      body: uploadForm(C3, makeEspImage({ secureVersion: 2, minChipRevision: 3, maxChipRevision: 199 }), { acknowledge_secure_version_raise: 'true' }),
    });
    expect(released.status).toBe(201);
    release = released.body;
  });

  it.each([
    ['a chip revision below the range', { chip_revision: 2 }, 'chip_revision_unsupported'],
    ['a chip revision above the range', { chip_revision: 200, secure_version: 0 }, 'chip_revision_unsupported'],
    ['an eFuse secure version above the image', { chip_revision: 4, secure_version: 3 }, 'secure_version_too_low'],
    ['a revision and a secure version the image admits', { chip_revision: 101, secure_version: 2 }, 'offered'],
    ['neither', {}, 'offered'],
  ])('answers a device that reports %s', async (_name, reported, status) => {
    const deviceId = `ic-${status}-${Object.values(reported).join('-') || 'none'}`;
    const answer = await check(deviceId, reported);
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe(status);
    expect(answer.body.update_available).toBe(status === 'offered');
    if (status !== 'offered') expect(answer.body.message).toMatch(/bootloader would refuse/);
  });

  it('records the reason in the decision record and counts such devices apart in the preview', async () => {
    await check('ic-record', { chip_revision: 1 });
    const devices = (await api('GET', `/api/v1/projects/${p.project.id}/devices/`, { token: p.user.token })).body as Array<{ id: string; device_id: string; chip_revision: number | null }>;
    const device = devices.find((d) => d.device_id === 'ic-record')!;
    expect(device.chip_revision).toBe(1);
    const records = (await api('GET', `/api/v1/projects/${p.project.id}/devices/${device.id}/check-events/`, { token: p.user.token })).body as Array<{ status: string; message: string }>;
    expect(records[0]).toMatchObject({ status: 'chip_revision_unsupported' });

    const preview = (await api('GET', `/api/v1/projects/${p.project.id}/deployments/${release.deployment_id}/preview/`, { token: p.user.token })).body;
    expect(preview.outcomes.chip_revision_unsupported.count).toBe(3);
    expect(preview.outcomes.secure_version_too_low).toMatchObject({ count: 1, device_ids: ['ic-secure_version_too_low-4-3'] });
  });

  it('refuses a chip revision or secure version out of range with 400', async () => {
    expect((await check('ic-bad-1', { chip_revision: 70_000 })).status).toBe(400);
    expect((await check('ic-bad-2', { secure_version: -1 })).status).toBe(400);
  });
});
