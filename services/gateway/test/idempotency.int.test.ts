import { randomUUID } from 'node:crypto';
import { MANIFEST, api, randomBinary, setupProject, uploadForm } from '@ota/testkit';

// Idempotency-Key on uploads, releases and deployments (docs/api.md, "Retrying an upload"): a
// retried or parallel pipeline job creates one build and one deployment, and a key reused for
// another request is refused.

test('a repeated upload with the same key answers the first answer and stores nothing more; parallel ones wait for it', async () => {
  const f = await setupProject();
  const path = `/api/v1/projects/${f.project.id}/artifacts/`;
  const binary = randomBinary(200_000);
  const key = `build-${randomUUID()}`;
  const upload = (manifest: object = MANIFEST, body: Buffer = binary, headerKey = key) =>
    api('POST', path, { token: f.apiToken, headers: { 'Idempotency-Key': headerKey }, body: uploadForm(manifest, body) });

  const answers = await Promise.all(Array.from({ length: 6 }, () => upload()));
  expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201, 201]);
  expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
  expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
  const later = await upload();
  expect(later.body).toEqual(answers[0]!.body);
  const listed = (await api('GET', path, { token: f.apiToken })).body;
  expect(listed).toHaveLength(1);

  // The same key with another binary, or another manifest, is refused, and stores nothing.
  const otherBinary = await upload(MANIFEST, randomBinary(1000));
  expect(otherBinary.status).toBe(422);
  expect(otherBinary.body.detail[0]).toMatchObject({ loc: ['header', 'Idempotency-Key'], msg: expect.stringContaining('different request') });
  expect((await upload({ ...MANIFEST, version_label: '9.9.9' })).status).toBe(422);
  expect((await api('GET', path, { token: f.apiToken })).body).toHaveLength(1);
  // Another key is another upload; a malformed key is refused before anything is read.
  expect((await upload(MANIFEST, binary, `build-${randomUUID()}`)).body.build_number).toBe(2);
  expect((await upload(MANIFEST, binary, 'bad key with spaces')).status).toBe(422);
  // A refused first request keeps nothing: the retry with the same key runs.
  const refusedKey = `refused-${randomUUID()}`;
  expect((await upload({ version_label: '1' }, binary, refusedKey)).status).toBe(400);
  expect((await upload(MANIFEST, binary, refusedKey)).status).toBe(201);
});

test('a repeated release or deployment with the same key creates one deployment', async () => {
  const f = await setupProject();
  const key = `release-${randomUUID()}`;
  const binary = randomBinary(10_000);
  const releases = await Promise.all(
    Array.from({ length: 4 }, () =>
      api('POST', `/api/v1/projects/${f.project.id}/release/`, { token: f.apiToken, headers: { 'Idempotency-Key': key }, body: uploadForm(MANIFEST, binary, { rollout_percentage: '10' }) }),
    ),
  );
  expect(releases.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
  expect(new Set(releases.map((answer) => answer.body.deployment_id)).size).toBe(1);
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.apiToken })).body).toHaveLength(1);

  const create = (json: object) => api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.apiToken, headers: { 'Idempotency-Key': 'deploy-once' }, json });
  const body = { artifact_id: releases[0]!.body.artifact_id, rollout_percentage: 5, notes: 'canary' };
  const created = await Promise.all([create(body), create({ notes: 'canary', rollout_percentage: 5, artifact_id: body.artifact_id })]);
  expect(created[0]!.body.id).toBe(created[1]!.body.id);
  expect((await create({ ...body, rollout_percentage: 6 })).status).toBe(422);
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.apiToken })).body).toHaveLength(2);
});

test('a form field without a name is a malformed upload (400), not a server error (found by the fuzzer)', async () => {
  const f = await setupProject();
  const boundary = 'unnamed-field-boundary';
  const body = [
    `--${boundary}\r\nContent-Disposition: form-data; name=""\r\n\r\n[]\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="manifest"\r\n\r\n${JSON.stringify(MANIFEST)}\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="binary"; filename="fw.bin"\r\n\r\nbytes\r\n--${boundary}--\r\n`,
  ].join('');
  const answer = await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.apiToken, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
  expect(answer.status).toBe(400);
  expect(answer.body.detail).toMatch(/no readable name/);
  expect((await api('GET', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.apiToken })).body).toEqual([]);
});
