import mongoose from 'mongoose';
import { MANIFEST, api, eventually, randomBinary, setupProject, testStack, uploadForm, WebhookReceiver } from '@ota/testkit';

// Project webhooks through the public API against the real services (docs/api.md, "Webhooks").
// Delivery under guardrail pauses and staged ramps is in guardrails.int.test.ts; a telemetry
// process killed mid-delivery is in the fault suite.

const receivers: WebhookReceiver[] = [];
afterAll(() => Promise.all(receivers.map((receiver) => receiver.close())));

async function receiver(answer?: (deliveryId: string, attempt: number) => number | 'hold') {
  const started = await WebhookReceiver.start(answer);
  receivers.push(started);
  return started;
}

test('a webhook shows its secret once, gets each subscribed event signed, and logs every attempt', async () => {
  const f = await setupProject();
  const hooks = `/api/v1/projects/${f.project.id}/webhooks/`;
  // The receiver fails the first attempt of each delivery with a 500, then takes it.
  const target = await receiver((_, attempt) => (attempt === 1 ? 500 : 200));
  const created = await api('POST', hooks, { token: f.apiToken, json: { url: target.url, events: ['artifact.uploaded'] } });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ url: target.url, events: ['artifact.uploaded'], secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) });
  const listed = await api('GET', hooks, { token: f.user.token });
  expect(listed.body).toEqual([{ id: created.body.id, url: target.url, events: ['artifact.uploaded'], created_at: created.body.created_at }]);

  // Two uploads are two events of the subscribed kind; the deployment created after is not.
  const artifacts = [];
  for (let i = 0; i < 2; i++) {
    artifacts.push((await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body);
  }
  await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifacts[0].id } });
  const accepted = await eventually(async () => target.accepted(), (deliveries) => deliveries.length === 2, 20_000);
  expect(accepted.map((delivery) => delivery.event)).toEqual(['artifact.uploaded', 'artifact.uploaded']);
  for (const attempt of target.attempts) expect(WebhookReceiver.signatureIsValid(created.body.secret, attempt)).toBe(true);
  const bodies = accepted.map((delivery) => JSON.parse(delivery.body));
  expect(bodies.map((body) => body.audit_event.target_id).sort()).toEqual(artifacts.map((artifact) => artifact.id).sort());
  expect(bodies[0]).toMatchObject({ id: accepted[0]!.id, event: 'artifact.uploaded', kinds: ['artifact.uploaded'], project_id: f.project.id, audit_event: { action: 'artifact.uploaded', actor_type: 'user' } });

  // The log: each delivery, its two attempts, what the receiver said, and the body it was sent.
  const log = await eventually(
    async () => (await api('GET', `${hooks}${created.body.id}/deliveries/`, { token: f.user.token })).body as Array<Record<string, any>>,
    (deliveries) => deliveries.length === 2 && deliveries.every((delivery) => delivery.state === 'delivered'),
  );
  for (const delivery of log) {
    expect(delivery.attempts.map((attempt: { status_code: number; error: string }) => [attempt.status_code, attempt.error])).toEqual([
      [500, 'the receiver answered 500'],
      [200, ''],
    ]);
    expect(delivery).toMatchObject({ event: 'artifact.uploaded', next_attempt_at: null, delivered_at: expect.any(String) });
    expect(delivery.payload).toEqual(bodies.find((body) => body.id === delivery.id));
  }
  const limited = await api('GET', `${hooks}${created.body.id}/deliveries/?limit=1`, { token: f.user.token });
  expect(limited.body).toHaveLength(1);

  // Deleted: gone from the list, its log with it, and nothing more is sent.
  expect((await api('DELETE', `${hooks}${created.body.id}/`, { token: f.user.token })).status).toBe(204);
  expect((await api('GET', hooks, { token: f.user.token })).body).toEqual([]);
  const gone = await api('GET', `${hooks}${created.body.id}/deliveries/`, { token: f.user.token });
  expect(gone.status).toBe(404);
  expect(gone.body.detail).toBe('webhook not found');
  const audit = (await api('GET', `/api/v1/projects/${f.project.id}/audit/`, { token: f.user.token })).body as Array<{ action: string }>;
  expect(audit.map((event) => event.action)).toEqual(expect.arrayContaining(['webhook.created', 'webhook.deleted']));
}, 60_000);

test('a receiver that is down gets the delivery once it is back, under the same delivery id', async () => {
  const f = await setupProject();
  let down = true;
  const target = await receiver(() => (down ? 503 : 200));
  const created = await api('POST', `/api/v1/projects/${f.project.id}/webhooks/`, { token: f.user.token, json: { url: target.url, events: ['artifact.uploaded'] } });
  await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) });
  // Back-off: in the test stack the waits are 0.2 s, 0.4 s, 0.8 s, … so a few attempts come quickly.
  await eventually(async () => target.attempts.length, (count) => count >= 3, 20_000);
  down = false;
  const accepted = await eventually(async () => target.accepted(), (deliveries) => deliveries.length === 1, 30_000);
  expect(new Set(target.attempts.map((attempt) => attempt.id))).toEqual(new Set([accepted[0]!.id]));
  const log = (await api('GET', `/api/v1/projects/${f.project.id}/webhooks/${created.body.id}/deliveries/`, { token: f.user.token })).body;
  expect(log[0].attempts.length).toBe(target.attempts.length);
  // Exponential back-off: the n-th wait is at least WEBHOOK_RETRY_BASE_MS (200 in the test stack)
  // times 2^(n-1). A busy machine only makes a wait longer, never shorter.
  const times = log[0].attempts.map((attempt: { at: string }) => Date.parse(attempt.at));
  const waits = times.slice(1).map((time: number, i: number) => time - times[i]);
  expect(waits.length).toBeGreaterThanOrEqual(2);
  for (const [i, wait] of waits.entries()) expect(wait).toBeGreaterThanOrEqual(200 * 2 ** i);
}, 60_000);

test('webhooks with a bad url, no events or an unknown event kind are refused with the reason', async () => {
  const f = await setupProject();
  const create = (json: Record<string, unknown>) => api('POST', `/api/v1/projects/${f.project.id}/webhooks/`, { token: f.user.token, json });
  // A body that fails its schema is 422 with the problems listed; a URL the service refuses is 400.
  const cases: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ url: 'ftp://hooks.example.com/', events: ['artifact.uploaded'] }, 400, /http or https/],
    [{ url: 'https://user:secret@hooks.example.com/', events: ['artifact.uploaded'] }, 400, /credentials/],
    [{ url: 'https://hooks.example.com/', events: [] }, 422, /events/],
    [{ url: 'https://hooks.example.com/', events: ['device.deleted'] }, 422, /events/],
    [{ events: ['artifact.uploaded'] }, 422, /url/],
  ];
  for (const [body, status, detail] of cases) {
    const response = await create(body);
    expect([JSON.stringify(body), response.status]).toEqual([JSON.stringify(body), status]);
    expect(JSON.stringify(response.body.detail)).toMatch(detail);
  }
  const missing = await api('DELETE', `/api/v1/projects/${f.project.id}/webhooks/00000000-0000-4000-8000-000000000000/`, { token: f.user.token });
  expect(missing.status).toBe(404);
});

test('deleting a project deletes its webhooks', async () => {
  const f = await setupProject();
  const target = await receiver();
  const created = await api('POST', `/api/v1/projects/${f.project.id}/webhooks/`, { token: f.user.token, json: { url: target.url, events: ['artifact.uploaded'] } });
  expect(created.status).toBe(201);
  expect((await api('DELETE', `/api/v1/projects/${f.project.id}/`, { token: f.user.token })).status).toBe(204);
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    const telemetry = connection.getClient().db(String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'telemetry'));
    expect(await telemetry.collection('webhooks').countDocuments({ project_id: f.project.id })).toBe(0);
  } finally {
    await connection.close();
  }
});
