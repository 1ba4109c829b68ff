import { randomUUID } from 'node:crypto';
import { connectMongo } from '@ota/mongo';
import { createLogger } from '@ota/logging';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerRolloutModels } from '../src/adapters/mongo/models';
import { MongoDeviceStateStore } from '../src/adapters/mongo/mongo-device-state-store';
import { MongoStatusCounts } from '../src/adapters/mongo/mongo-status-counts';
import { takeCountedStep } from '../src/domain/counted-steps';
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

/** Stores a device's event as rollout does (DeviceRollout.record), and counts the step it took. */
async function report(kept: DeploymentCounts, deploymentId: string, deviceUuid: string, status: string, reason = ''): Promise<void> {
  const at = new Date();
  const { newlyStored } = await events.recordEvent({ deploymentId, projectId: 'p', deviceUuid, status, rank: rankOf(status), reason, at });
  const { step } = await takeCountedStep(events, { deploymentId, projectId: 'p', deviceUuid, status, at });
  kept.eventStored(deploymentId, at, { status, reason, newlyStored }, step);
}

test('200 devices reporting at once are all counted, by status and by failure reason', async () => {
  const deploymentId = randomUUID();
  const kept = counts(() => new Date());
  await kept.start(deploymentId, new Date());
  // Each device walks part of the lifecycle; every fifth fails, every seventh of those fails twice.
  await Promise.all(
    Array.from({ length: 200 }, async (_, device) => {
      for (const step of LIFECYCLE.slice(0, 1 + (device % LIFECYCLE.length))) {
        await report(kept, deploymentId, `dev-${device}`, step);
        if (device % 3 === 0) await kept.flush();
      }
      if (device % 5 === 0) await report(kept, deploymentId, `dev-${device}`, 'failed', 'flash_write_failed');
      if (device % 35 === 0) await report(kept, deploymentId, `dev-${device}`, 'failed', 'flash_write_failed');
    }),
  );
  const read = await kept.read(deploymentId);
  expect(Object.fromEntries(read.byStatus)).toEqual(Object.fromEntries(await events.devicesByStatus(deploymentId)));
  expect(Object.fromEntries(read.failuresByReason)).toEqual({ flash_write_failed: 40 + 6 });
  expect([...read.byStatus.values()].reduce((sum, n) => sum + n, 0)).toBe(200);
});

test('two replicas counting racing bursts of the same devices count each device once, under its highest status; a recount confirms it', async () => {
  const deploymentId = randomUUID();
  let now = new Date(Date.now() - 60_000);
  // Two replicas: each its own counter (and pending deltas) over the one store.
  const replicas = [counts(() => now), counts(() => now)];
  await replicas[0]!.start(deploymentId, now);
  const statuses = [...LIFECYCLE, 'failed', 'rolled_back'];
  for (let round = 0; round < 50; round++) {
    // Each of 10 devices sends 2 to 6 reports at once, split between the replicas, repeats included.
    await Promise.all(
      Array.from({ length: 10 }, (_, device) =>
        Promise.all(
          Array.from({ length: 2 + ((round + device) % 5) }, (_, index) => {
            const status = statuses[(round * 7 + device * 3 + index * 5) % statuses.length]!;
            return report(replicas[index % 2]!, deploymentId, `r${round}-d${device}`, status, status === 'failed' ? 'flash_write_failed' : status === 'rolled_back' ? 'boot_failed' : '');
          }),
        ),
      ),
    );
    await Promise.all(replicas.map((replica) => replica.flush()));
    const read = await replicas[round % 2]!.read(deploymentId);
    const truth = await events.devicesByStatus(deploymentId);
    expect({ round, counts: Object.fromEntries(read.byStatus) }).toEqual({ round, counts: Object.fromEntries(truth) });
  }
  // The recount takes no missing step and finds what the deltas said.
  expect(await events.claimMissingSteps(deploymentId)).toBe(0);
  now = new Date(Date.now() + 10_000);
  const before = await replicas[0]!.read(deploymentId);
  expect(await store.recount(deploymentId, new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000), new Date())).toBe(true);
  expect(Object.fromEntries((await replicas[1]!.read(deploymentId)).byStatus)).toEqual(Object.fromEntries(before.byStatus));
}, 300_000);

test('a compaction folds the deltas into a snapshot without changing the sum', async () => {
  const deploymentId = randomUUID();
  let now = new Date('2026-01-01T00:00:00Z');
  const kept = counts(() => now);
  await kept.start(deploymentId, now);
  for (let second = 0; second < 30; second++) {
    now = new Date(Date.parse('2026-01-01T00:00:00Z') + second * 1000 + 300);
    kept.eventStored(deploymentId, now, { status: 'offered', reason: '', newlyStored: true }, { from: 'pending', to: 'offered' });
    if (second % 2 === 1) kept.eventStored(deploymentId, now, { status: 'confirmed', reason: '', newlyStored: true }, { from: 'offered', to: 'confirmed' });
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
  for (let device = 0; device < 10; device++) await report(kept, deploymentId, `d${device}`, 'offered');
  // A change counted for a step that was never stored (a delta that drifted from the truth).
  kept.eventStored(deploymentId, new Date(), { status: 'flashed', reason: '', newlyStored: true }, { from: 'downloaded', to: 'flashed' });
  await kept.flush();
  expect(Object.fromEntries((await kept.read(deploymentId)).byStatus)).toEqual({ offered: 10, flashed: 1, downloaded: -1 });

  const cut = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000);
  await new Promise((resolve) => setTimeout(resolve, cut.getTime() - Date.now() + 50));
  expect(await store.recount(deploymentId, cut, new Date())).toBe(true);
  // A report after the cut is a delta on top of the recount.
  await report(kept, deploymentId, 'd0', 'download_started');
  expect(Object.fromEntries((await kept.read(deploymentId)).byStatus)).toEqual({ offered: 9, download_started: 1 });
});

test('a deployment counted before counts were kept is counted on its first read', async () => {
  const deploymentId = randomUUID();
  for (let device = 0; device < 3; device++) {
    await events.recordEvent({ deploymentId, projectId: 'p', deviceUuid: `old-${device}`, status: 'confirmed', rank: rankOf('confirmed'), reason: '', at: new Date(Date.now() - 5_000) });
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
