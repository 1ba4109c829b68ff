import { randomUUID } from 'node:crypto';
import { connectMongo } from '@ota/mongo';
import { createLogger } from '@ota/logging';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerRolloutModels } from '../src/adapters/mongo/models';
import { MongoDeviceStateStore } from '../src/adapters/mongo/mongo-device-state-store';
import { MongoStatusCounts } from '../src/adapters/mongo/mongo-status-counts';
import { DeploymentCounts } from '../src/domain/deployment-counts';
import { rankOf } from '../src/domain/device-status';
import type { StatusCountStore } from '../src/domain/ports';

// The deployment counts of docs/performance.md ("The deployment summary") on the stack's FerretDB,
// which loses most concurrent updates of one document: the counts are kept with inserts only.

let mongo: Connection;
let events: MongoDeviceStateStore;
let store: MongoStatusCounts;
const warnings: string[] = [];

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `counts_${randomUUID().slice(0, 8)}`, logger: createLogger('counts-test', 'silent') });
  const models = registerRolloutModels(mongo);
  events = new MongoDeviceStateStore(models);
  store = new MongoStatusCounts(models, events);
});

afterAll(async () => {
  await mongo?.dropDatabase();
  await mongo?.close();
});

const counts = (now: () => Date) => new DeploymentCounts({ store, recountIntervalMs: 3_600_000, now, warn: (_error, message) => warnings.push(message) });
const LIFECYCLE = ['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed'];

/** Stores a device's event as rollout does, and counts it from the status it had before. */
async function report(kept: DeploymentCounts, deploymentId: string, deviceId: string, status: string, before: string, reason = ''): Promise<string> {
  const at = new Date();
  const { newlyStored } = await events.recordEvent({ deploymentId, projectId: 'p', deviceId, status, rank: rankOf(status), reason, at });
  const after = rankOf(status) > rankOf(before) ? status : before;
  kept.eventStored(deploymentId, at, { status, reason, newlyStored }, before, after);
  return after;
}

test('200 devices reporting at once are all counted, by status and by failure reason', async () => {
  const deploymentId = randomUUID();
  const kept = counts(() => new Date());
  await kept.start(deploymentId, new Date());
  // Each device walks part of the lifecycle; every fifth fails, every seventh of those fails twice.
  await Promise.all(
    Array.from({ length: 200 }, async (_, device) => {
      let status = 'pending';
      for (const step of LIFECYCLE.slice(0, 1 + (device % LIFECYCLE.length))) {
        status = await report(kept, deploymentId, `dev-${device}`, step, status);
        if (device % 3 === 0) await kept.flush();
      }
      if (device % 5 === 0) status = await report(kept, deploymentId, `dev-${device}`, 'failed', status, 'flash_write_failed');
      if (device % 35 === 0) await report(kept, deploymentId, `dev-${device}`, 'failed', status, 'flash_write_failed');
    }),
  );
  const read = await kept.read(deploymentId);
  expect(Object.fromEntries(read.byStatus)).toEqual(Object.fromEntries(await events.devicesByStatus(deploymentId)));
  expect(Object.fromEntries(read.failuresByReason)).toEqual({ flash_write_failed: 40 + 6 });
  expect([...read.byStatus.values()].reduce((sum, n) => sum + n, 0)).toBe(200);
});

test('a compaction folds the deltas into a snapshot without changing the sum', async () => {
  const deploymentId = randomUUID();
  let now = new Date('2026-01-01T00:00:00Z');
  const kept = counts(() => now);
  await kept.start(deploymentId, now);
  for (let second = 0; second < 30; second++) {
    now = new Date(Date.parse('2026-01-01T00:00:00Z') + second * 1000 + 300);
    kept.eventStored(deploymentId, now, { status: 'offered', reason: '', newlyStored: true }, 'pending', 'offered');
    if (second % 2 === 1) kept.eventStored(deploymentId, now, { status: 'confirmed', reason: '', newlyStored: true }, 'offered', 'confirmed');
  }
  await kept.flush();
  const before = await store.readCounts(deploymentId);
  await kept.maintain();
  const after = await store.readCounts(deploymentId);
  expect(after!.snapshot.version).toBe(2);
  // Cut 5 s behind the last second: the deltas of the last seconds stay deltas.
  expect(after!.snapshot.through).toEqual(new Date('2026-01-01T00:00:24Z'));
  expect(after!.counts).toEqual(before!.counts);
  expect(Object.fromEntries(after!.counts.byStatus)).toEqual({ offered: 15, confirmed: 15 });
  expect(warnings).toEqual([]);
});

test('a recount replaces counts that drifted with the stored truth, and keeps the deltas after its cut', async () => {
  const deploymentId = randomUUID();
  const kept = counts(() => new Date());
  await kept.start(deploymentId, new Date(Date.now() - 60_000));
  for (let device = 0; device < 10; device++) await report(kept, deploymentId, `d${device}`, 'offered', 'pending');
  // A change counted from a status the device no longer had (another replica raised it meanwhile).
  kept.eventStored(deploymentId, new Date(), { status: 'flashed', reason: '', newlyStored: true }, 'downloaded', 'flashed');
  await kept.flush();
  expect(Object.fromEntries((await kept.read(deploymentId)).byStatus)).toEqual({ offered: 10, flashed: 1, downloaded: -1 });

  const cut = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000);
  await new Promise((resolve) => setTimeout(resolve, cut.getTime() - Date.now() + 50));
  expect(await store.recount(deploymentId, cut, new Date())).toBe(true);
  // A report after the cut is a delta on top of the recount.
  await report(kept, deploymentId, 'd0', 'download_started', 'offered');
  expect(Object.fromEntries((await kept.read(deploymentId)).byStatus)).toEqual({ offered: 9, download_started: 1 });
});

test('a deployment counted before counts were kept is counted on its first read', async () => {
  const deploymentId = randomUUID();
  for (let device = 0; device < 3; device++) {
    await events.recordEvent({ deploymentId, projectId: 'p', deviceId: `old-${device}`, status: 'confirmed', rank: rankOf('confirmed'), reason: '', at: new Date(Date.now() - 5_000) });
  }
  expect(await store.readCounts(deploymentId)).toBeNull();
  // Readers at once share one count of the events.
  let recounts = 0;
  const counting: StatusCountStore = {
    startCounts: (...args) => store.startCounts(...args),
    insertDelta: (...args) => store.insertDelta(...args),
    readCounts: (...args) => store.readCounts(...args),
    compact: (...args) => store.compact(...args),
    recount: (...args) => ((recounts += 1), store.recount(...args)),
  };
  const kept = new DeploymentCounts({ store: counting, recountIntervalMs: 3_600_000, now: () => new Date(), warn: (_error, message) => warnings.push(message) });
  const reads = await Promise.all([kept.read(deploymentId), kept.read(deploymentId), kept.read(deploymentId)]);
  expect(reads.map((read) => Object.fromEntries(read.byStatus))).toEqual([{ confirmed: 3 }, { confirmed: 3 }, { confirmed: 3 }]);
  expect(recounts).toBe(1);
});
