import { MANIFEST, api, checkBody, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// A deployment's offer caps against a wake storm (docs/api.md, "Offer caps"): every device of the
// fleet checks again and again, ignoring poll_after_seconds, and the deployment starts no more
// updates a minute, and keeps no more devices updating at once, than its caps say. The offers are
// counted from the deployment's states, by the minute each was recorded in.

const FLEET = 300;
const check = (f: ProjectFixture, deviceId: string) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });
const fleetOf = (prefix: string) => Array.from({ length: FLEET }, (_, i) => `${prefix}-${i}`);

async function cappedDeployment(prefix: string, caps: Record<string, number>) {
  const f = await setupProject({ maxDevices: 0 });
  const fleet = fleetOf(prefix);
  for (let i = 0; i < fleet.length; i += 50) await Promise.all(fleet.slice(i, i + 50).map((deviceId) => check(f, deviceId)));
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, caps } });
  expect(created.status).toBe(201);
  expect(created.body.caps).toEqual({ offers_per_minute: null, max_in_progress: null, ...caps });
  const started = await api('POST', `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect(started.status).toBe(200);
  return { f, fleet, deploymentId: created.body.id as string };
}

/** Every device checks in a loop, 24 at a time, until `until`; answers how the checks were answered. */
async function wakeStorm(f: ProjectFixture, fleet: string[], until: number) {
  const answers: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (Date.now() < until) {
      const deviceId = fleet[next++ % fleet.length]!;
      const answer = await check(f, deviceId);
      const key = answer.status === 200 ? String(answer.body.status) : String(answer.status);
      answers[key] = (answers[key] ?? 0) + 1;
      if (answer.body.status === 'not_in_rollout') {
        expect(answer.body.message).toMatch(/offer caps/);
        // Told to come back once the next minute has begun, never later than the usual poll.
        expect(answer.body.poll_after_seconds).toBeLessThanOrEqual(121);
      }
    }
  };
  await Promise.all(Array.from({ length: 24 }, worker));
  return answers;
}

async function offersByMinute(f: ProjectFixture, deploymentId: string): Promise<Map<number, number>> {
  const states = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deploymentId}/states/`, { token: f.user.token })).body as Array<{ status: string; updated_at: string }>;
  const minutes = new Map<number, number>();
  for (const state of states.filter((candidate) => candidate.status === 'offered')) {
    const minute = Math.floor(Date.parse(state.updated_at) / 60_000);
    minutes.set(minute, (minutes.get(minute) ?? 0) + 1);
  }
  return minutes;
}

test('a cap of 40 new offers a minute holds under a wake storm of the whole fleet, minute by minute, across every check', async () => {
  const { f, fleet, deploymentId } = await cappedDeployment('rate', { offers_per_minute: 40 });
  // The storm runs through the rest of this minute and one whole minute after it.
  const firstWholeMinute = Math.floor(Date.now() / 60_000) + 1;
  const answers = await wakeStorm(f, fleet, (firstWholeMinute + 1) * 60_000 + 500);
  expect(answers.offered).toBeGreaterThan(0);
  expect(answers.not_in_rollout).toBeGreaterThan(0);
  const minutes = await offersByMinute(f, deploymentId);
  // No minute started more than the cap (the store counts exactly; ±10% is the allowance)...
  for (const [minute, offers] of minutes) expect({ minute, offers: offers <= 44 }).toEqual({ minute, offers: true });
  // ...and the whole minute of the storm, which wanted all 300, started the cap's worth.
  expect(minutes.get(firstWholeMinute)).toBeGreaterThanOrEqual(36);
  expect(minutes.get(firstWholeMinute)).toBeLessThanOrEqual(40);
}, 200_000);

test('a cap of 25 devices updating at once holds under a wake storm, and a device that finishes frees its place', async () => {
  const { f, fleet, deploymentId } = await cappedDeployment('concurrent', { max_in_progress: 25 });
  await wakeStorm(f, fleet, Date.now() + 8_000);
  const offered = async () => [...(await offersByMinute(f, deploymentId)).values()].reduce((sum, count) => sum + count, 0);
  expect(await offered()).toBe(25);
  // The preview says the caps leave no room now.
  const preview = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deploymentId}/preview/`, { token: f.user.token })).body;
  expect(preview.held_now).toEqual({ window_opens_at: null, caps_room: 0 });
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deploymentId}/summary/`, { token: f.user.token })).body.held_now).toEqual({ window_opens_at: null, caps_room: 0 });
  // One device confirms: its place is free, and the storm fills it with one more, not more.
  const states = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deploymentId}/states/`, { token: f.user.token })).body as Array<{ device_id: string; status: string }>;
  const device = (await api('GET', `/api/v1/projects/${f.project.id}/devices/${states[0]!.device_id}/`, { token: f.user.token })).body;
  const confirmed = await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: device.device_id, deployment_id: deploymentId, event: 'confirmed', build_number: 1 } });
  expect(confirmed.status).toBe(200);
  await wakeStorm(f, fleet, Date.now() + 5_000);
  expect(await offered()).toBe(25);
  const summary = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deploymentId}/summary/`, { token: f.user.token })).body;
  expect(summary.devices_by_status).toMatchObject({ offered: 25, confirmed: 1 });
}, 120_000);
