import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, checkBody, eventually, setupProject, testStack, uploadForm } from '@ota/testkit';
import { sdkBinary } from '../../../device-sdk/test/harness/device-process';
import { firmwareImage } from '../../../device-sdk/test/harness/firmware-images';

// Delta patches through the API (docs/api.md, "Delta patches"), on the real stack: the artifacts
// service's patch workers and the pinned detools make them from two real RISC-V builds.

const work = mkdtempSync(join(tmpdir(), 'ota-gateway-patches-'));

/** The gateway's ota_offered_bytes_total of `kind`, as Prometheus scrapes it. */
async function offeredBytes(kind: string): Promise<number> {
  const exposition = await (await fetch(testStack().metricsUrls.gateway!)).text();
  const line = exposition.split('\n').find((sample) => sample.startsWith('ota_offered_bytes_total{') && sample.includes(`kind="${kind}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}
afterAll(() => rmSync(work, { recursive: true, force: true }));

test('a patch asked for twice is one job; a worker makes it ready, smaller than the build; a wrong base is refused', async () => {
  const f = await setupProject();
  const base = `/api/v1/projects/${f.project.id}`;
  const upload = async (version: number) => {
    const manifest = { version_label: `1.0.${version}`, framework: 'esp_idf', chip_family: 'esp32c3' };
    const answer = await api('POST', `${base}/artifacts/`, { token: f.user.token, body: uploadForm(manifest, readFileSync(firmwareImage(work, version))) });
    expect(answer.status).toBe(201);
    return answer.body as { id: string; file_size: number; checksum_sha256: string };
  };
  const [v1, v2] = [await upload(1), await upload(2)];
  const patches = `${base}/artifacts/${v2.id}/patches/`;
  const asked = await Promise.all([0, 1, 2].map(() => api('POST', patches, { token: f.user.token, json: { base_artifact_id: v1.id } })));
  expect(asked.map((answer) => answer.status)).toEqual([202, 202, 202]);
  expect(new Set(asked.map((answer) => answer.body.id)).size).toBe(1);
  expect(asked[0]!.body).toMatchObject({ base_artifact_id: v1.id, target_artifact_id: v2.id, target_sha256: v2.checksum_sha256, format: 'detools-sequential-heatshrink-8-7' });

  const listed = await eventually(
    () => api('GET', patches, { token: f.apiToken }),
    (answer) => answer.body[0]?.state === 'ready' || answer.body[0]?.state === 'failed',
    60_000,
  );
  expect(listed.body).toHaveLength(1);
  expect(listed.body[0]).toMatchObject({ state: 'ready', reason: '', attempts: 1 });
  expect(listed.body[0].size).toBeLessThan(v2.file_size / 10);
  expect(listed.body[0].sha256).toMatch(/^[0-9a-f]{64}$/);

  const same = await api('POST', patches, { token: f.user.token, json: { base_artifact_id: v2.id } });
  expect([same.status, same.body.detail]).toEqual([400, expect.stringContaining('same bytes')]);
  const stranger = await api('POST', patches, { token: f.user.token, json: { base_artifact_id: '00000000-0000-4000-8000-000000000000' } });
  expect([stranger.status, stranger.body.detail]).toEqual([400, expect.stringContaining('base_artifact_id names no build of this project')]);
  expect((await api('GET', `${base}/artifacts/00000000-0000-4000-8000-000000000000/patches/`, { token: f.apiToken })).status).toBe(404);
  const audit = await api('GET', `${base}/audit/?action=artifact`, { token: f.user.token });
  expect(audit.body.filter((event: { action: string }) => event.action === 'artifact.patch_requested')).toHaveLength(3);
}, 120_000);

test('an offer carries the ready patch from the image the device runs, downloadable like the build; without the capability the offer is unchanged', async () => {
  const f = await setupProject();
  const base = `/api/v1/projects/${f.project.id}`;
  const images = [1, 2].map((version) => readFileSync(firmwareImage(work, version)));
  const upload = async (index: number) => {
    const manifest = { version_label: `1.0.${index + 1}`, framework: 'esp_idf', chip_family: 'esp32c3' };
    return (await api('POST', `${base}/artifacts/`, { token: f.user.token, body: uploadForm(manifest, images[index]!) })).body as { id: string; checksum_sha256: string };
  };
  const [v1, v2] = [await upload(0), await upload(1)];
  const check = (deviceId: string, extra: Record<string, unknown>) =>
    api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId, { chip_family: 'esp32c3', current_build_number: 1, ...extra }) });
  for (const deviceId of ['delta-unit', 'plain-unit']) expect((await check(deviceId, {})).status).toBe(200);
  const deployment = await api('POST', `${base}/deployments/`, { token: f.user.token, json: { artifact_id: v2.id } });
  const started = await api('POST', `${base}/deployments/${deployment.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect([started.status, started.body.detail]).toEqual([200, undefined]);
  const capable = { current_hash: v1.checksum_sha256, delta_formats: ['detools-sequential-heatshrink-8-7'] };

  const patchBytesBefore = await offeredBytes('patch');
  // The first check of a known base asks for the patch; while it is being made (a bounded wait)
  // the device is told to come back rather than offered the whole build, and holds its offer.
  const askedAt = Date.now();
  const first = await check('delta-unit', capable);
  expect(first.body).toMatchObject({ status: 'not_in_rollout', update_available: false, message: expect.stringContaining('delta patch') });
  expect('url' in first.body).toBe(false);
  const waitEnds = Date.parse(first.body.patch_wait_until);
  expect(waitEnds).toBeGreaterThan(askedAt);
  expect(waitEnds).toBeLessThanOrEqual(Date.now() + 60_000);
  expect(first.body.poll_after_seconds).toBeLessThanOrEqual(12);
  const states = await api('GET', `${base}/deployments/${deployment.body.id}/states/`, { token: f.apiToken });
  expect(states.body.map((state: { status: string }) => state.status)).toEqual(['offered']);
  const offered = await eventually(() => check('delta-unit', capable), (answer) => answer.body.patch !== undefined, 60_000);
  // The gateway counts what the offer asked the device to download (this test's stack is shared: at least).
  expect((await offeredBytes('patch')) - patchBytesBefore).toBeGreaterThanOrEqual(offered.body.patch.size);
  expect(offered.body).toMatchObject({ status: 'offered', checksum: v2.checksum_sha256, patch: { base_sha256: v1.checksum_sha256, format: 'detools-sequential-heatshrink-8-7' } });
  const patchUrl = new URL(offered.body.patch.url);
  const whole = await fetch(patchUrl);
  expect([whole.status, whole.headers.get('etag')]).toEqual([200, `"${offered.body.patch.sha256}"`]);
  const patchBytes = Buffer.from(await whole.arrayBuffer());
  expect(patchBytes.length).toBe(offered.body.patch.size);
  const tail = await fetch(patchUrl, { headers: { range: 'bytes=100-' } });
  expect([tail.status, Buffer.from(await tail.arrayBuffer()).equals(patchBytes.subarray(100))]).toEqual([206, true]);
  // The device SDK's applier turns the running image into the offered build with it.
  writeFileSync(join(work, 'running.bin'), images[0]!);
  writeFileSync(join(work, 'offered.patch'), patchBytes);
  const applied = spawnSync(sdkBinary('ota-delta-apply'), [join(work, 'running.bin'), join(work, 'offered.patch'), join(work, 'new.bin')], { encoding: 'utf8' });
  expect(applied.status).toBe(0);
  expect(readFileSync(join(work, 'new.bin')).equals(images[1]!)).toBe(true);
  // The patch's URL reads no other object: a changed base is a URL whose signature fails.
  const altered = new URL(patchUrl);
  altered.searchParams.set('patch', v2.checksum_sha256);
  expect((await fetch(altered)).status).toBe(403);

  // Without delta_formats, or with an image no build has, the offer is the full image alone.
  for (const extra of [{ current_hash: v1.checksum_sha256 }, { ...capable, current_hash: 'f'.repeat(64) }]) {
    const plain = await check('plain-unit', extra);
    expect([plain.body.status, 'patch' in plain.body]).toEqual(['offered', false]);
  }

  // What the devices report of their downloads is counted per deployment and per build: each
  // device once (its first `downloaded`, however often and at once it is sent), bytes saved from the build's size.
  const report = (deviceId: string, detail: Record<string, unknown>) =>
    api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: deployment.body.id, event: 'downloaded', detail } });
  const patchSize = offered.body.patch.size as number;
  const sent = await Promise.all([...[0, 1, 2].map(() => report('delta-unit', { delta: 'applied', patch_bytes: patchSize })), report('plain-unit', {})]);
  // A later `downloaded` of the same device changes nothing.
  sent.push(await report('plain-unit', { delta: 'applied', patch_bytes: 1 }));
  expect(sent.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
  const v2Size = offered.body.size as number;
  for (const path of [`${base}/deployments/${deployment.body.id}/downloads/`, `${base}/artifacts/${v2.id}/downloads/`]) {
    const downloads = await api('GET', path, { token: f.apiToken });
    expect([path, downloads.status, downloads.body]).toEqual([path, 200, { patched: 1, whole: 1, fell_back: 0, patch_bytes: patchSize, build_bytes: v2Size, bytes_saved: v2Size - patchSize }]);
  }
  // The base build shipped nowhere: nothing counted; another project's deployment is no deployment here.
  expect((await api('GET', `${base}/artifacts/${v1.id}/downloads/`, { token: f.apiToken })).body).toMatchObject({ patched: 0, whole: 0, bytes_saved: 0 });
  const other = await setupProject();
  expect((await api('GET', `/api/v1/projects/${other.project.id}/deployments/${deployment.body.id}/downloads/`, { token: other.apiToken })).status).toBe(404);
}, 120_000);

test('a started deployment asks for its patches from the images devices run, before any device checks for it', async () => {
  const f = await setupProject();
  const base = `/api/v1/projects/${f.project.id}`;
  const images = [1, 3].map((version) => readFileSync(firmwareImage(work, version)));
  const upload = async (index: number) => {
    const manifest = { version_label: `2.0.${index}`, framework: 'esp_idf', chip_family: 'esp32c3' };
    return (await api('POST', `${base}/artifacts/`, { token: f.user.token, body: uploadForm(manifest, images[index]!) })).body as { id: string; checksum_sha256: string };
  };
  const [old, next] = [await upload(0), await upload(1)];
  // Three devices run the old build and say so; one runs an image no build has.
  for (const [deviceId, hash] of [['run-1', old.checksum_sha256], ['run-2', old.checksum_sha256], ['run-3', old.checksum_sha256.toUpperCase()], ['odd-1', 'e'.repeat(64)]] as const) {
    expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId, { chip_family: 'esp32c3', current_build_number: 1, current_hash: hash }) })).status).toBe(200);
  }
  const deployment = await api('POST', `${base}/deployments/`, { token: f.user.token, json: { artifact_id: next.id } });
  expect((await api('POST', `${base}/deployments/${deployment.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } })).status).toBe(200);
  const patches = await eventually(
    () => api('GET', `${base}/artifacts/${next.id}/patches/`, { token: f.apiToken }),
    (answer) => answer.body[0]?.state === 'ready',
    60_000,
  );
  expect(patches.body).toEqual([expect.objectContaining({ base_artifact_id: old.id, target_artifact_id: next.id, state: 'ready' })]);
}, 120_000);
