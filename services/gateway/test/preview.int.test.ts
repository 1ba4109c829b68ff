import { MANIFEST, api, checkBody, randomBinary, setupProject, uploadForm } from '@ota/testkit';

// A deployment preview (docs/api.md, "Guardrails and staged plans") against the real services:
// its counts must be what the checks that follow answer, device by device.

type Preview = { state: string; as_if_active: boolean; rollout_percentage: number; device_count: number; outcomes: Record<string, { count: number; device_ids: string[] }> };

// What a check answers, in the preview's words.
const OUTCOME_OF_CHECK: Record<string, string> = { no_active_deployment: 'not_targeted' };

test('a preview counts, outcome by outcome, what the next check of every device answers', async () => {
  const f = await setupProject();
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const artifact = (await api('POST', `${projectPath}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const beta = (await api('POST', `${projectPath}/channels/`, { token: f.user.token, json: { name: 'beta' } })).body;

  // Each device checks in with the profile it will check with again.
  const profiles = new Map<string, Record<string, unknown>>();
  for (let i = 1; i <= 30; i++) profiles.set(`pv-${i}`, {});
  profiles.set('pv-s3-1', { chip_family: 'esp32s3' });
  profiles.set('pv-s3-2', { chip_family: 'esp32s3' });
  profiles.set('pv-off', {});
  profiles.set('pv-beta', {});
  const check = (deviceId: string) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId, profiles.get(deviceId)) });
  for (const deviceId of profiles.keys()) expect((await check(deviceId)).status).toBe(200);
  const deviceUuid = async (deviceId: string) =>
    ((await api('GET', `${projectPath}/devices/`, { token: f.user.token })).body as Array<{ id: string; device_id: string }>).find((d) => d.device_id === deviceId)!.id;
  expect((await api('PATCH', `${projectPath}/devices/${await deviceUuid('pv-off')}/`, { token: f.user.token, json: { active: false } })).status).toBe(200);
  expect((await api('PATCH', `${projectPath}/devices/${await deviceUuid('pv-beta')}/`, { token: f.user.token, json: { channel_id: beta.id } })).status).toBe(200);
  // Registered through the API, never checked in: no profile to decide on.
  expect((await api('POST', `${projectPath}/devices/`, { token: f.user.token, json: { device_id: 'pv-registered' } })).status).toBe(201);

  const created = await api('POST', `${projectPath}/deployments/`, {
    token: f.user.token,
    json: { artifact_id: artifact.id, target_channel_ids: [f.defaultChannelId], rollout_percentage: 50 },
  });
  const deploymentPath = `${projectPath}/deployments/${created.body.id}/`;
  const preview = async () => {
    const response = await api('GET', `${deploymentPath}preview/`, { token: f.apiToken });
    expect(response.status).toBe(200);
    return response.body as Preview;
  };

  // A draft is previewed as if it started now.
  const draft = await preview();
  expect(draft).toMatchObject({ state: 'draft', as_if_active: true, rollout_percentage: 50, device_count: 35 });
  expect(draft.outcomes).toMatchObject({
    device_inactive: { count: 1, device_ids: ['pv-off'] },
    not_targeted: { count: 1, device_ids: ['pv-beta'] },
    unknown_hardware: { count: 1, device_ids: ['pv-registered'] },
    no_compatible_build: { count: 2 },
    up_to_date: { count: 0 },
  });
  // The 30 plain devices split between the cohort and the rest.
  expect(draft.outcomes.offered!.count + draft.outcomes.not_in_rollout!.count).toBe(30);
  expect(draft.outcomes.offered!.count).toBeGreaterThan(0);
  expect(draft.outcomes.not_in_rollout!.count).toBeGreaterThan(0);

  // In parts of the id space (as the console reads a large fleet): the parts hold each device once
  // and their counts add up to the whole's.
  const devices = (await api('GET', `${projectPath}/devices/`, { token: f.user.token })).body as Array<{ id: string; device_id: string }>;
  const sums: Record<string, number> = {};
  const seen: string[] = [];
  let counted = 0;
  for (const prefix of [...'0123456789abcdef']) {
    const answer = await api('GET', `${deploymentPath}preview/?id_prefix=${prefix}`, { token: f.apiToken });
    expect(answer.status).toBe(200);
    const part = answer.body as Preview & { id_prefix: string };
    expect(part.id_prefix).toBe(prefix);
    expect(part.device_count).toBe(devices.filter((device) => device.id.startsWith(prefix)).length);
    counted += part.device_count;
    for (const [outcome, { count, device_ids }] of Object.entries(part.outcomes)) {
      sums[outcome] = (sums[outcome] ?? 0) + count;
      seen.push(...device_ids);
    }
  }
  expect(counted).toBe(35);
  expect(sums).toEqual(Object.fromEntries(Object.entries(draft.outcomes).map(([outcome, { count }]) => [outcome, count])));
  expect(seen.sort()).toEqual(devices.map((device) => device.device_id).sort());
  for (const bad of ['g', 'abc', 'A']) expect((await api('GET', `${deploymentPath}preview/?id_prefix=${bad}`, { token: f.apiToken })).status).toBe(422);

  expect((await api('POST', `${deploymentPath}transition/`, { token: f.user.token, json: { action: 'start' } })).status).toBe(200);
  const active = await preview();
  expect(active).toMatchObject({ state: 'active', as_if_active: false });
  expect(active.outcomes).toEqual(draft.outcomes);

  // A device that rolled the build back is never offered it again; one that confirmed it runs it
  // (and reports it from then on). The preview knows both.
  const [rolledBack, confirmed] = active.outcomes.offered!.device_ids;
  const report = (deviceId: string, json: Record<string, unknown>) =>
    api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: created.body.id, ...json } });
  expect((await report(rolledBack!, { event: 'rolled_back' })).status).toBe(200);
  expect((await report(confirmed!, { event: 'confirmed', build_number: artifact.build_number })).status).toBe(200);
  profiles.set(confirmed!, { current_build_number: artifact.build_number });
  const after = await preview();
  expect(after.outcomes.offered!.count).toBe(active.outcomes.offered!.count - 2);
  expect(after.outcomes.not_in_rollout!.count).toBe(active.outcomes.not_in_rollout!.count + 1);
  expect(after.outcomes.up_to_date).toEqual({ count: 1, device_ids: [confirmed] });

  // Every device that can check now answers what the preview counted.
  const answered = new Map<string, string[]>();
  for (const deviceId of profiles.keys()) {
    const answer = (await check(deviceId)).body as { update_available: boolean; status?: string };
    const outcome = answer.update_available ? 'offered' : (OUTCOME_OF_CHECK[answer.status!] ?? answer.status!);
    answered.set(outcome, [...(answered.get(outcome) ?? []), deviceId]);
  }
  for (const [outcome, bucket] of Object.entries(after.outcomes)) {
    if (outcome === 'unknown_hardware') continue;
    expect([outcome, answered.get(outcome)?.length ?? 0]).toEqual([outcome, bucket.count]);
    expect(answered.get(outcome) ?? []).toEqual(expect.arrayContaining(bucket.device_ids));
  }
}, 60_000);

test('a preview of a deployment of another project is 404', async () => {
  const [f, other] = await Promise.all([setupProject(), setupProject()]);
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id } });
  const response = await api('GET', `/api/v1/projects/${other.project.id}/deployments/${created.body.id}/preview/`, { token: other.user.token });
  expect(response.status).toBe(404);
  expect(response.body.detail).toBe('deployment not found');
});
