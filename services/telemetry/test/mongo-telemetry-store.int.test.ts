import { randomUUID } from 'node:crypto';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerTelemetryModels } from '../src/adapters/mongo/models';
import { MongoTelemetryStore } from '../src/adapters/mongo/mongo-telemetry-store';
import type { AuditRecord } from '../src/domain/model';

// Telemetry's audit store alone, against the run's real MongoDB-protocol server (FerretDB here),
// in a database of its own (docs/api.md, "Audit event"): an event delivered twice is stored once,
// pages come newest first and continue from an event's id (ties in time broken by id), and an
// action filter takes one action or a resource's actions.

let mongo: Connection;
let store: MongoTelemetryStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, seconds));

function audit(projectId: string, seconds: number, action: string, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return { id: randomUUID(), projectId, action, actorType: 'user', actorId: 'u1', tokenPrefix: 'ota_pat_abcd', actorRole: 'operator', actorVia: 'personal_token', targetType: action.split('.')[0]!, targetId: randomUUID(), createdAt: at(seconds), details: { seconds }, ...overrides };
}

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_audit_${randomUUID().slice(0, 8)}` });
  const models = registerTelemetryModels(mongo);
  await ensureIndexes(mongo);
  store = new MongoTelemetryStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

it('stores an event delivered twice once, and gives it back as it came', async () => {
  const projectId = randomUUID();
  const event = audit(projectId, 1, 'deployment.started', { details: { automatic: false, nested: { a: [1, 2] } } });
  await store.insertAudit(event);
  await store.insertAudit(event);
  expect(await store.listAudit(projectId, 10)).toEqual([event]);
});

it('pages newest first, continuing from an event, with ties in time ordered by id', async () => {
  const projectId = randomUUID();
  const events = [audit(projectId, 1, 'project.created'), audit(projectId, 2, 'token.created'), audit(projectId, 2, 'token.revoked'), audit(projectId, 3, 'artifact.uploaded'), audit(projectId, 4, 'deployment.created')];
  for (const event of events) await store.insertAudit(event);
  await store.insertAudit(audit(randomUUID(), 5, 'project.created'));
  const expected = [...events].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((event) => event.id);

  const pages: string[] = [];
  let before: string | undefined;
  for (;;) {
    const page = (await store.listAudit(projectId, 2, before))!;
    pages.push(...page.map((event) => event.id));
    if (page.length < 2) break;
    before = page.at(-1)!.id;
  }
  expect(pages).toEqual(expected);
  // An id of another project, or of nothing, is no place to continue from.
  expect(await store.listAudit(projectId, 2, randomUUID())).toBeNull();
});

it('filters by one action, or by every action of a resource', async () => {
  const projectId = randomUUID();
  for (const [seconds, action] of [[1, 'deployment.created'], [2, 'deployment.started'], [3, 'deployments_extra.created'], [4, 'artifact.uploaded']] as const) {
    await store.insertAudit(audit(projectId, seconds, action));
  }
  expect((await store.listAudit(projectId, 10, undefined, 'deployment.started'))!.map((event) => event.action)).toEqual(['deployment.started']);
  expect((await store.listAudit(projectId, 10, undefined, 'deployment'))!.map((event) => event.action)).toEqual(['deployment.started', 'deployment.created']);
});
