import { MANIFEST, api, checkBody, randomBinary, seededRandom, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// A deployment's counts under reports that race: each device sends a burst of reports at once (a
// retry racing the event it repeats, steps arriving out of order), many devices at the same time.
// The rule (docs/api.md, "Rollout statuses"): a device counts once, under the highest status it
// reached; a repeat changes nothing. After every round the summary must say what the states list
// says, device for device.

const ROUNDS = 50;
const DEVICES_PER_ROUND = 20;
/**
 * Reports in flight at once: under the gateway's device API admission (DEVICE_API_MAX_CONCURRENCY,
 * 64), so that none is shed with a 503.
 */
const IN_FLIGHT = 48;
const EVENTS = ['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed', 'failed', 'rolled_back'] as const;


jest.setTimeout(300_000);

const SEED = Number(process.env.OTA_RACE_SEED ?? Math.floor(Math.random() * 2 ** 31));

let fixture: ProjectFixture;
let deploymentId: string;
let buildNumber: number;

beforeAll(async () => {
  fixture = await setupProject({ maxDevices: ROUNDS * DEVICES_PER_ROUND + 10, name: 'racing reports' });
  const release = await api('POST', `/api/v1/projects/${fixture.project.id}/release/`, { token: fixture.user.token, body: uploadForm(MANIFEST, randomBinary(256)) });
  expect(release.status).toBe(201);
  const offer = await check('first-device');
  expect(offer.body.update_available).toBe(true);
  [deploymentId, buildNumber] = [offer.body.deployment_id, offer.body.build_number];
});

const check = (deviceId: string) => api('POST', '/api/v1/ota/check/', { token: fixture.deviceScopeToken, json: checkBody(deviceId) });

function report(deviceId: string, event: (typeof EVENTS)[number]) {
  return api('POST', '/api/v1/ota/status/', {
    token: fixture.deviceScopeToken,
    json: {
      device_id: deviceId,
      deployment_id: deploymentId,
      event,
      ...(event === 'confirmed' ? { build_number: buildNumber } : {}),
      ...(event === 'failed' ? { reason: 'flash_write_failed' } : event === 'rolled_back' ? { reason: 'confirm_timeout' } : {}),
    },
  });
}

/** Runs `work` on every item, `size` at a time, in order; the answers in the items' order. */
async function inPool<T, R>(size: number, items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const answers: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      answers[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return answers;
}

async function summaryAndStates() {
  const base = `/api/v1/projects/${fixture.project.id}/deployments/${deploymentId}`;
  const [summary, states] = await Promise.all([api('GET', `${base}/summary/`, { token: fixture.user.token }), api('GET', `${base}/states/`, { token: fixture.user.token })]);
  expect([summary.status, states.status]).toEqual([200, 200]);
  const listed: Record<string, number> = {};
  for (const state of states.body as Array<{ status: string }>) listed[state.status] = (listed[state.status] ?? 0) + 1;
  const summarised = Object.fromEntries(Object.entries(summary.body.devices_by_status as Record<string, number>).filter(([status, count]) => status !== 'pending' && count !== 0));
  return { listed, summarised };
}

test(`${ROUNDS} rounds of ${DEVICES_PER_ROUND} devices each sending a burst of racing reports: the summary always says what the states list says`, async () => {
  process.stdout.write(`[racing reports] seed ${SEED} (OTA_RACE_SEED=${SEED} repeats it)\n`);
  const next = seededRandom(SEED);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  for (let round = 0; round < ROUNDS; round++) {
    const devices = Array.from({ length: DEVICES_PER_ROUND }, (_, index) => `race-${round}-${index}`);
    for (const answer of await Promise.all(devices.map(check))) expect(answer.body.update_available).toBe(true);
    // 2 to 6 reports per device, repeats and reversals included, each device's sent together.
    const reports = devices.flatMap((deviceId) => Array.from({ length: 2 + Math.floor(next() * 5) }, () => ({ deviceId, event: pick(EVENTS) })));
    const answers = await inPool(IN_FLIGHT, reports, ({ deviceId, event }) => report(deviceId, event));
    for (const answer of answers) expect({ round, status: answer.status, body: answer.status === 200 ? null : answer.body }).toEqual({ round, status: 200, body: null });
    const { listed, summarised } = await summaryAndStates();
    expect({ round, summarised }).toEqual({ round, summarised: listed });
  }
});

test('ten concurrent repeats of `confirmed` leave one `confirmed` in the timeline and one device in the counts', async () => {
  const deviceId = 'repeat-confirmed';
  expect((await check(deviceId)).body.update_available).toBe(true);
  const before = await summaryAndStates();
  const answers = await Promise.all(Array.from({ length: 10 }, () => report(deviceId, 'confirmed')));
  for (const answer of answers) expect(answer.status).toBe(200);
  const devices = await api('GET', `/api/v1/projects/${fixture.project.id}/devices/?q=${deviceId}`, { token: fixture.user.token });
  const uuid = (devices.body as Array<{ id: string; device_id: string }>).find((device) => device.device_id === deviceId)!.id;
  const timeline = await api('GET', `/api/v1/projects/${fixture.project.id}/devices/${uuid}/events/`, { token: fixture.user.token });
  expect(timeline.status).toBe(200);
  const confirmed = (timeline.body as Array<{ event: string; deployment_id: string }>).filter((event) => event.event === 'confirmed' && event.deployment_id === deploymentId);
  expect(confirmed).toHaveLength(1);
  const after = await summaryAndStates();
  expect(after.summarised).toEqual(after.listed);
  expect((after.summarised.confirmed ?? 0) - (before.summarised.confirmed ?? 0)).toBe(1);
});
