import { randomUUID } from 'node:crypto';
import { ServiceMetrics } from '@ota/metrics';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { MeteredWebhookStore } from '../src/adapters/metered-webhook-store';
import { registerTelemetryModels, type TelemetryModels } from '../src/adapters/mongo/models';
import { MongoWebhookStore } from '../src/adapters/mongo/mongo-webhook-store';
import { WebhookSecretBox } from '../src/adapters/mongo/webhook-secret-box';
import type { WebhookDelivery } from '../src/domain/model';

// Telemetry's webhook store alone, against the run's real MongoDB-protocol server (FerretDB here),
// in a database of its own: webhooks with their secrets sealed at rest, deliveries stored once,
// claimed one at a time, finished without undoing a success, and the pending ones counted.

const KEYS = 'k2:second-key-for-the-store-test-0123456789,k1:first-key-for-the-store-test-01234567890';
let mongo: Connection;
let models: TelemetryModels;
let store: MongoWebhookStore;
const projectId = randomUUID();
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, seconds));

function delivery(webhookId: string, overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return { id: randomUUID(), webhookId, projectId, event: 'deployment.started', auditEventId: randomUUID(), body: '{}', state: 'pending', attempts: [], nextAttemptAt: at(0), createdAt: at(0), ...overrides };
}

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_telemetry_${randomUUID().slice(0, 8)}` });
  models = registerTelemetryModels(mongo);
  await ensureIndexes(mongo);
  store = new MongoWebhookStore(models, new WebhookSecretBox(KEYS));
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

it('keeps a webhook with its secret sealed, opens it on read, and lists a project’s webhooks oldest first', async () => {
  const first = { id: randomUUID(), projectId, url: 'https://hooks.example.com/a', events: ['deployment.paused'], secret: 'whsec_first', createdAt: at(1) };
  const second = { ...first, id: randomUUID(), url: 'https://hooks.example.com/b', secret: 'whsec_second', createdAt: at(2) };
  await store.insertWebhook(second);
  await store.insertWebhook(first);
  const stored = await models.Webhook.findById(first.id).lean<{ secret: string }>();
  expect(stored!.secret).not.toContain('whsec_first');
  expect(stored!.secret).toMatch(/^v1:k2:/);
  expect(await store.findWebhook(first.id)).toEqual(first);
  expect((await store.listWebhooks(projectId)).map((webhook) => webhook.id)).toEqual([first.id, second.id]);
  expect(await store.listWebhooks(randomUUID())).toEqual([]);
});

it('stores a delivery once, however often it is inserted', async () => {
  const webhookId = randomUUID();
  const once = delivery(webhookId);
  await store.insertDeliveries([once, delivery(webhookId, { createdAt: at(1) })]);
  await store.insertDeliveries([once]);
  expect(await store.listDeliveries(webhookId, 10)).toHaveLength(2);
});

it('claims the delivery due first, only once until its claim lapses, and none that is not due', async () => {
  // The store claims across webhooks: the deliveries earlier tests left due are claimed far ahead first.
  while (await store.claimDueDelivery(at(1_000), new Date(Date.UTC(2100, 0, 1))));
  const webhookId = randomUUID();
  const early = delivery(webhookId, { nextAttemptAt: at(10) });
  const later = delivery(webhookId, { nextAttemptAt: at(20) });
  await store.insertDeliveries([later, early]);
  expect(await store.claimDueDelivery(at(5), at(100))).toBeNull();
  expect((await store.claimDueDelivery(at(30), at(100)))?.id).toBe(early.id);
  expect((await store.claimDueDelivery(at(30), at(100)))?.id).toBe(later.id);
  expect(await store.claimDueDelivery(at(30), at(100))).toBeNull();
  // The claims lapse: a worker that died leaves its delivery due again.
  expect((await store.claimDueDelivery(at(101), at(200)))?.id).toBe(early.id);
});

it('tells when the pending delivery first in line falls due, claimed or not, and nothing once none is pending', async () => {
  // The deliveries earlier tests left pending (some claimed far ahead), set aside as delivered.
  await models.Delivery.updateMany({ state: 'pending' }, { $set: { state: 'delivered', next_attempt_at: null } });
  expect(await store.firstPendingAt()).toBeNull();
  const webhookId = randomUUID();
  const sooner = delivery(webhookId, { nextAttemptAt: at(40) });
  const after = delivery(webhookId, { nextAttemptAt: at(50) });
  await store.insertDeliveries([after, sooner, delivery(webhookId, { state: 'delivered', nextAttemptAt: null })]);
  expect(await store.firstPendingAt()).toEqual(at(40));
  // A claim moves its delivery to the claim's end: the other is then first.
  expect((await store.claimDueDelivery(at(45), at(60)))?.id).toBe(sooner.id);
  expect(await store.firstPendingAt()).toEqual(at(50));
  await store.finishAttempt(sooner.id, { at: at(46), statusCode: 200, error: '', durationMs: 1 }, { state: 'delivered', nextAttemptAt: null });
  await store.finishAttempt(after.id, { at: at(46), statusCode: 200, error: '', durationMs: 1 }, { state: 'delivered', nextAttemptAt: null });
  expect(await store.firstPendingAt()).toBeNull();
});

it('gives each due delivery to one claimer, however many replicas claim at once', async () => {
  // Replicas: stores over connections of their own, each claiming several at a time, as the
  // dispatchers of several telemetry replicas do.
  while (await store.claimDueDelivery(at(1_000), new Date(Date.UTC(2100, 0, 1))));
  const replicas = await Promise.all(
    [0, 1, 2, 3].map(async () => {
      const connection = await connectMongo({ uri: testStack().mongodbUri, database: mongo.db!.databaseName });
      return { connection, store: new MongoWebhookStore(registerTelemetryModels(connection), new WebhookSecretBox(KEYS)) };
    }),
  );
  try {
    const webhookId = randomUUID();
    const due = Array.from({ length: 12 }, (_, index) => delivery(webhookId, { nextAttemptAt: at(index) }));
    await store.insertDeliveries(due);
    const claimed: string[] = [];
    await Promise.all(
      replicas.flatMap((replica) =>
        [0, 1, 2, 3].map(async () => {
          for (;;) {
            const won = await replica.store.claimDueDelivery(at(50), at(100));
            if (!won) return;
            claimed.push(won.id);
          }
        }),
      ),
    );
    expect(claimed.sort()).toEqual(due.map((one) => one.id).sort());
  } finally {
    await Promise.all(replicas.map((replica) => replica.connection.close()));
  }
});

it('claims a delivery again once the claim of a dispatcher that died before moving it on lapses', async () => {
  while (await store.claimDueDelivery(at(1_000), new Date(Date.UTC(2100, 0, 1))));
  const stranded = delivery(randomUUID(), { nextAttemptAt: at(3) });
  await store.insertDeliveries([stranded]);
  // Its claim was inserted, and the dispatcher died before it moved the due time.
  await models.DeliveryClaim.collection.insertOne({ _id: `${stranded.id}#${at(3).getTime()}#0`, delivery_id: stranded.id, webhook_id: stranded.webhookId, until: at(60) } as never);
  expect(await store.claimDueDelivery(at(50), at(100))).toBeNull();
  expect((await store.claimDueDelivery(at(61), at(100)))?.id).toBe(stranded.id);
  expect(await store.claimDueDelivery(at(62), at(100))).toBeNull();
  // Finished, it leaves no claim behind.
  await store.finishAttempt(stranded.id, { at: at(63), statusCode: 204, error: '', durationMs: 4 }, { state: 'delivered', nextAttemptAt: null });
  expect(await models.DeliveryClaim.countDocuments({ delivery_id: stranded.id })).toBe(0);
});

it('logs every attempt, and a late failure does not undo a success', async () => {
  const webhookId = randomUUID();
  const one = delivery(webhookId, { nextAttemptAt: at(0) });
  await store.insertDeliveries([one]);
  await store.finishAttempt(one.id, { at: at(1), statusCode: 204, error: '', durationMs: 5 }, { state: 'delivered', nextAttemptAt: null });
  await store.finishAttempt(one.id, { at: at(2), statusCode: null, error: 'no answer in time', durationMs: 2000 }, { state: 'pending', nextAttemptAt: at(60) });
  const [logged] = await store.listDeliveries(webhookId, 10);
  expect(logged).toMatchObject({ state: 'delivered', nextAttemptAt: null });
  expect(logged!.attempts.map((attempt) => attempt.statusCode)).toEqual([204, null]);
});

it('deletes a webhook with its deliveries, only in its own project', async () => {
  const webhook = { id: randomUUID(), projectId, url: 'https://hooks.example.com/c', events: ['artifact.uploaded'], secret: 'whsec_c', createdAt: at(3) };
  await store.insertWebhook(webhook);
  await store.insertDeliveries([delivery(webhook.id)]);
  expect(await store.deleteWebhook(randomUUID(), webhook.id)).toBe(false);
  expect(await store.deleteWebhook(projectId, webhook.id)).toBe(true);
  expect(await store.findWebhook(webhook.id)).toBeNull();
  expect(await store.listDeliveries(webhook.id, 10)).toEqual([]);
});

it('counts the pending deliveries and the oldest one’s age, and each attempt by result, for the metrics', async () => {
  const metrics = new ServiceMetrics('telemetry');
  const metered = new MeteredWebhookStore(models, new WebhookSecretBox(KEYS), metrics);
  const { count, oldestCreatedAt } = await metered.pendingDeliveries();
  const pendingDocs = await models.Delivery.find({ state: 'pending' }).sort({ created_at: 1 }).lean<Array<{ created_at: Date }>>();
  expect(count).toBe(pendingDocs.length);
  expect(oldestCreatedAt).toEqual(pendingDocs[0]?.created_at ?? null);

  const webhookId = randomUUID();
  const failing = delivery(webhookId);
  await metered.insertDeliveries([failing]);
  await metered.finishAttempt(failing.id, { at: at(1), statusCode: 503, error: 'the receiver answered 503', durationMs: 3 }, { state: 'pending', nextAttemptAt: at(10) });
  await metered.finishAttempt(failing.id, { at: at(11), statusCode: 503, error: 'the receiver answered 503', durationMs: 3 }, { state: 'failed', nextAttemptAt: null });
  const exposition = await metrics.registry.metrics();
  expect(exposition).toContain('ota_webhook_delivery_attempts_total{result="retrying",ota_component="telemetry"} 1');
  expect(exposition).toContain('ota_webhook_delivery_attempts_total{result="failed",ota_component="telemetry"} 1');
  expect(exposition).toContain('ota_webhook_delivery_attempts_total{result="delivered",ota_component="telemetry"} 0');
  expect(exposition).toMatch(/ota_webhook_pending_deliveries\{ota_component="telemetry"\} \d+/);
});
