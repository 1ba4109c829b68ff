import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, eventually, setupProject, uploadForm } from '@ota/testkit';
import { firmwareImage } from '../../../device-sdk/test/harness/firmware-images';

// Delta patches through the API (docs/api.md, "Delta patches"), on the real stack: the artifacts
// service's patch workers and the pinned detools make them from two real RISC-V builds.

const work = mkdtempSync(join(tmpdir(), 'ota-gateway-patches-'));
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
