import { randomUUID } from 'node:crypto';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerRolloutModels } from '../src/adapters/mongo/models';
import { MongoDeviceReportStore } from '../src/adapters/mongo/mongo-device-report-store';
import { MongoDeviceStateStore } from '../src/adapters/mongo/mongo-device-state-store';
import { rankOf } from '../src/domain/device-status';
import type { DeviceReport } from '../src/domain/ports';

// Rollout's device stores alone, against the run's real MongoDB-protocol server (FerretDB here),
// in a database of its own: each status stored once per device and deployment (every `failed`
// kept), the highest status and rolled-back devices, devices per status and failures per reason
// counted by the store, a device's states deleted with its reports; and a device's timeline of
// reports, newest first and trimmed.

let mongo: Connection;
let states: MongoDeviceStateStore;
let reports: MongoDeviceReportStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, seconds));

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_rollout_devices_${randomUUID().slice(0, 8)}` });
  const models = registerRolloutModels(mongo);
  await ensureIndexes(mongo);
  states = new MongoDeviceStateStore(models);
  reports = new MongoDeviceReportStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

const record = (deploymentId: string, deviceId: string, status: string, seconds: number, reason = '') =>
  states.recordEvent({ deploymentId, projectId: 'p', deviceId, status, rank: rankOf(status), reason, at: at(seconds) });

it('stores each status once per device and deployment, every failure report, and knows the highest status', async () => {
  const deploymentId = randomUUID();
  expect(await record(deploymentId, 'd1', 'offered', 1)).toEqual({ newlyStored: true });
  expect(await record(deploymentId, 'd1', 'downloaded', 2)).toEqual({ newlyStored: true });
  expect(await record(deploymentId, 'd1', 'downloaded', 3)).toEqual({ newlyStored: false });
  // A late `offered` does not move it back.
  expect(await record(deploymentId, 'd1', 'offered', 4)).toEqual({ newlyStored: false });
  expect(await states.highestStatus(deploymentId, 'd1')).toEqual({ status: 'downloaded', rank: rankOf('downloaded'), rolledBack: false });
  expect(await states.highestStatus(deploymentId, 'nobody')).toBeNull();

  await record(deploymentId, 'd2', 'failed', 5, 'checksum_mismatch');
  await record(deploymentId, 'd2', 'failed', 6, 'checksum_mismatch');
  await record(deploymentId, 'd3', 'rolled_back', 7, 'boot_failed');
  await record(deploymentId, 'd3', 'rolled_back', 8, 'boot_failed');
  expect(Object.fromEntries(await states.devicesByStatus(deploymentId))).toEqual({ downloaded: 1, failed: 1, rolled_back: 1 });
  // Every failed report counts, and one rolled_back per device.
  expect(Object.fromEntries(await states.failuresByReason(deploymentId))).toEqual({ checksum_mismatch: 2, boot_failed: 1 });
  expect(await states.countRecentFailures(deploymentId, 'checksum_mismatch', at(6))).toBe(1);
  expect(Object.fromEntries(await states.devicesByStatus(deploymentId, { since: at(5) }))).toEqual({ failed: 1, rolled_back: 1 });
  expect((await states.listStates(deploymentId)).map((state) => [state.deviceId, state.status])).toEqual([['d3', 'rolled_back'], ['d2', 'failed'], ['d1', 'downloaded']]);
  expect(await states.highestStatus(deploymentId, 'd3')).toMatchObject({ rolledBack: true });
  expect([...((await states.rolledBackDevices([deploymentId])).get('d3') ?? [])]).toEqual([deploymentId]);
});

it('deletes a device’s states and reports, and says which deployments it was in', async () => {
  const [first, second] = [randomUUID(), randomUUID()];
  await record(first, 'leaving', 'offered', 1);
  await record(second, 'leaving', 'confirmed', 2);
  await reports.insertReport(report('leaving', first, 1));
  expect((await states.deleteDeviceStates('p', 'leaving')).sort()).toEqual([first, second].sort());
  expect(await states.highestStatus(first, 'leaving')).toBeNull();
  expect(await reports.listReports('p', 'leaving', 10, undefined)).toEqual([]);
});

function report(deviceId: string, deploymentId: string, seconds: number): DeviceReport {
  return { id: randomUUID(), projectId: 'p', deploymentId, deviceId, event: 'downloaded', status: 'downloaded', buildNumber: undefined, reason: '', detailJson: '{"attempt":1}', createdAt: at(seconds) };
}

it('keeps a device’s reports as sent, newest first, filtered by time, and trimmed to the newest', async () => {
  const deploymentId = randomUUID();
  for (let seconds = 1; seconds <= 6; seconds += 1) await reports.insertReport(report('timeline', deploymentId, seconds));
  const listed = await reports.listReports('p', 'timeline', 10, undefined);
  expect(listed.map((entry) => entry.createdAt)).toEqual([6, 5, 4, 3, 2, 1].map(at));
  expect(listed[0]).toMatchObject({ event: 'downloaded', detailJson: '{"attempt":1}', deploymentId });
  expect((await reports.listReports('p', 'timeline', 2, undefined)).map((entry) => entry.createdAt)).toEqual([at(6), at(5)]);
  expect((await reports.listReports('p', 'timeline', 10, at(5))).map((entry) => entry.createdAt)).toEqual([at(6), at(5)]);
  await reports.trimReports('timeline', 3);
  expect((await reports.listReports('p', 'timeline', 10, undefined)).map((entry) => entry.createdAt)).toEqual([at(6), at(5), at(4)]);
  // Another project's reader sees none of them.
  expect(await reports.listReports('q', 'timeline', 10, undefined)).toEqual([]);
});
