import { randomUUID } from 'node:crypto';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerRolloutModels } from '../src/adapters/mongo/models';
import { MongoDeviceReportStore } from '../src/adapters/mongo/mongo-device-report-store';
import { MongoDeviceStateStore } from '../src/adapters/mongo/mongo-device-state-store';
import { rankOf, statusOfEvent } from '../src/domain/device-status';
import type { DeviceReport, DeviceStateRecord } from '../src/domain/ports';

// Rollout's device stores alone, against the run's real MongoDB-protocol server (FerretDB here),
// in a database of its own: each status stored once per device and deployment (every `failed`
// kept), the highest status and rolled-back devices, devices per status and failures per reason
// counted by the store, a device's states deleted with its reports; and a device's timeline of
// reports, newest first, wherever each is stored (carried by its event, or alone where a release
// before this one stored a repeat).

let mongo: Connection;
let models: ReturnType<typeof registerRolloutModels>;
let states: MongoDeviceStateStore;
let reports: MongoDeviceReportStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, seconds));

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_rollout_devices_${randomUUID().slice(0, 8)}` });
  models = registerRolloutModels(mongo);
  await ensureIndexes(mongo);
  states = new MongoDeviceStateStore(models);
  reports = new MongoDeviceReportStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

const record = (deploymentId: string, deviceUuid: string, status: string, seconds: number, reason = '') =>
  states.recordEvent({ deploymentId, projectId: 'p', deviceUuid, status, rank: rankOf(status), reason, at: at(seconds) });

it('stores each status once per device and deployment, every failure report, and knows the highest status', async () => {
  const deploymentId = randomUUID();
  expect(await record(deploymentId, 'd1', 'offered', 1)).toEqual({ newlyStored: true, reportStored: false });
  expect(await record(deploymentId, 'd1', 'downloaded', 2)).toEqual({ newlyStored: true, reportStored: false });
  expect(await record(deploymentId, 'd1', 'downloaded', 3)).toEqual({ newlyStored: false, reportStored: false });
  // A late `offered` does not move it back.
  expect(await record(deploymentId, 'd1', 'offered', 4)).toEqual({ newlyStored: false, reportStored: false });
  // No step taken here (DeviceRollout takes them): it is counted under `pending`.
  expect(await states.highestStatus(deploymentId, 'd1')).toEqual({ status: 'downloaded', rank: rankOf('downloaded'), rolledBack: false, counted: 'pending' });
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
  expect((await states.listStates(deploymentId)).map((state) => [state.deviceUuid, state.status])).toEqual([['d3', 'rolled_back'], ['d2', 'failed'], ['d1', 'downloaded']]);
  expect(await states.highestStatus(deploymentId, 'd3')).toMatchObject({ rolledBack: true });
  expect([...((await states.rolledBackDevices([deploymentId])).get('d3') ?? [])]).toEqual([deploymentId]);
});

it('deletes a device’s states and reports, and says which deployments it was in', async () => {
  const [first, second] = [randomUUID(), randomUUID()];
  await record(first, 'leaving', 'offered', 1);
  await record(second, 'leaving', 'confirmed', 2);
  await storedAlone(report('leaving', first, 1));
  expect((await states.deleteDeviceStates('p', 'leaving')).sort()).toEqual([first, second].sort());
  expect(await states.highestStatus(first, 'leaving')).toBeNull();
  expect(await reports.listReports('p', 'leaving', 10, undefined)).toEqual([]);
});

function report(deviceUuid: string, deploymentId: string, seconds: number, event = 'downloaded', reason = ''): DeviceReport {
  return { id: randomUUID(), projectId: 'p', deploymentId, deviceUuid, event, status: statusOfEvent(event)!, buildNumber: undefined, reason, detailJson: '{"attempt":1}', createdAt: at(seconds) };
}

/** What a status report does with the stores (DeviceRollout.recordDeviceEvent): the event carries the report, and a repeat stores nothing. */
function storeReport(sent: DeviceReport): Promise<{ newlyStored: boolean; reportStored: boolean }> {
  return states.recordEvent({ ...sent, rank: rankOf(sent.status), at: sent.createdAt, report: sent });
}

/** A repeat as the release before this one stored it, alone in `device_reports`. */
async function storedAlone(sent: DeviceReport): Promise<void> {
  await models.DeviceReport.collection.insertOne({
    _id: sent.id,
    project_id: sent.projectId,
    deployment_id: sent.deploymentId,
    device_id: sent.deviceUuid,
    event: sent.event,
    status: sent.status,
    build_number: sent.buildNumber ?? null,
    reason: sent.reason,
    detail_json: sent.detailJson,
    created_at: sent.createdAt,
  } as never);
}

it('carries the first report of each status and every failure in the event, and lists them with the reports stored alone', async () => {
  const deploymentId = randomUUID();
  const first = report('carried', deploymentId, 1);
  const resent = report('carried', deploymentId, 2);
  const failure = report('carried', deploymentId, 3, 'failed', 'http_503');
  const failedAgain = report('carried', deploymentId, 4, 'failed', 'http_503');
  expect(await storeReport(first)).toEqual({ newlyStored: true, reportStored: true });
  // The status is stored already: the resent report stores nothing.
  expect(await storeReport(resent)).toEqual({ newlyStored: false, reportStored: false });
  // A repeat the release before stored alone is listed with the others.
  const legacy = report('carried', deploymentId, 2);
  await storedAlone(legacy);
  expect(await storeReport(failure)).toEqual({ newlyStored: true, reportStored: true });
  // Every failure is its own event, which carries its report.
  expect(await storeReport(failedAgain)).toEqual({ newlyStored: false, reportStored: true });
  // An offer carries no report.
  expect(await record(deploymentId, 'carried', 'offered', 5)).toEqual({ newlyStored: true, reportStored: false });

  const listed = await reports.listReports('p', 'carried', 10, undefined);
  expect(listed).toEqual([failedAgain, failure, legacy, first]);
  expect(await reports.listReports('p', 'carried', 2, undefined)).toEqual([failedAgain, failure]);
  expect(await reports.listReports('p', 'carried', 10, at(2))).toEqual([failedAgain, failure, legacy]);
  expect(await reports.listReports('q', 'carried', 10, undefined)).toEqual([]);
  // Carrying the report changes no count: one failed device, two failures.
  expect(Object.fromEntries(await states.devicesByStatus(deploymentId))).toEqual({ failed: 1 });
  expect(Object.fromEntries(await states.failuresByReason(deploymentId))).toEqual({ http_503: 2 });
  // Deleting the device deletes the reports its events carry as well.
  await states.deleteDeviceStates('p', 'carried');
  expect(await reports.listReports('p', 'carried', 10, undefined)).toEqual([]);
});

it('counts downloads per deployment by how they came, each device once, and backfills the ones stored before it did, once', async () => {
  const [first, second] = [randomUUID(), randomUUID()];
  const downloaded = (deviceUuid: string, deploymentId: string, detail: unknown) =>
    storeReport({ ...report(deviceUuid, deploymentId, 1), detailJson: JSON.stringify(detail) });
  // Sent at once, as retries are: one stored per device.
  await Promise.all([
    ...[0, 1, 2].map(() => downloaded('patched-1', first, { delta: 'applied', patch_bytes: 1_000 })),
    downloaded('patched-2', first, { delta: 'applied', patch_bytes: 234 }),
    downloaded('whole-1', first, {}),
    downloaded('fell-back-1', first, { delta: 'fell_back', delta_failure: 'checksum_mismatch' }),
    downloaded('boaster', second, { delta: 'applied', patch_bytes: 2 ** 40 }),
  ]);
  // A later report of another status says nothing of downloads.
  await storeReport(report('whole-1', first, 2, 'flashed'));
  expect(await states.downloadsOf([first])).toEqual({ patched: 2, whole: 1, fellBack: 1, patchBytes: 1_234 });
  // A claim past 4 GiB is not believed: a patch, of no bytes.
  expect(await states.downloadsOf([first, second])).toEqual({ patched: 3, whole: 1, fellBack: 1, patchBytes: 1_234 });
  expect(await states.downloadsOf([])).toEqual({ patched: 0, whole: 0, fellBack: 0, patchBytes: 0 });

  // As the previous release stored them: no `download`, and no record of the migration.
  await models.DeviceEvent.collection.updateMany({ deployment_id: first } as never, { $unset: { download: '', patch_bytes: '' } });
  await models.DataMigration.deleteMany({ _id: 'status_downloads' });
  expect(await states.downloadsOf([first])).toEqual({ patched: 0, whole: 0, fellBack: 0, patchBytes: 0 });
  await states.backfillDownloads();
  expect(await states.downloadsOf([first])).toEqual({ patched: 2, whole: 1, fellBack: 1, patchBytes: 1_234 });
  // Done once.
  await models.DeviceEvent.collection.updateMany({ deployment_id: first } as never, { $unset: { download: '', patch_bytes: '' } });
  await states.backfillDownloads();
  expect(await states.downloadsOf([first])).toEqual({ patched: 0, whole: 0, fellBack: 0, patchBytes: 0 });
});

it('stores a device’s first `offered` report once, under its own id, where the check’s offer carries none', async () => {
  const deploymentId = randomUUID();
  expect(await record(deploymentId, 'acked', 'offered', 1)).toEqual({ newlyStored: true, reportStored: false });
  const first = report('acked', deploymentId, 2, 'offered');
  const again = report('acked', deploymentId, 3, 'offered');
  expect(await reports.insertFirstReport(first)).toBe(true);
  expect(await reports.insertFirstReport(again)).toBe(false);
  expect(await reports.listReports('p', 'acked', 10, undefined)).toEqual([first]);
});

it('lists a device’s reports as sent, newest first, filtered by time and limited', async () => {
  const deploymentId = randomUUID();
  for (let seconds = 1; seconds <= 6; seconds += 1) await storedAlone(report('timeline', deploymentId, seconds));
  const listed = await reports.listReports('p', 'timeline', 10, undefined);
  expect(listed.map((entry) => entry.createdAt)).toEqual([6, 5, 4, 3, 2, 1].map(at));
  expect(listed[0]).toMatchObject({ event: 'downloaded', detailJson: '{"attempt":1}', deploymentId });
  expect((await reports.listReports('p', 'timeline', 2, undefined)).map((entry) => entry.createdAt)).toEqual([at(6), at(5)]);
  expect((await reports.listReports('p', 'timeline', 10, at(5))).map((entry) => entry.createdAt)).toEqual([at(6), at(5)]);
  // Another project's reader sees none of them.
  expect(await reports.listReports('q', 'timeline', 10, undefined)).toEqual([]);
});

it('gives status documents stored before states were paged their page keys, once', async () => {
  const deploymentId = randomUUID();
  const devices = ['00000000-0000-4000-8000-00000000000a', '80000000-0000-4000-8000-00000000000b'];
  for (const [index, deviceUuid] of devices.entries()) await record(deploymentId, deviceUuid, 'offered', index + 1);
  const keysOf = async () =>
    (await models.DeviceEvent.collection.find({ deployment_id: deploymentId } as never, { projection: { device_id: 1, page_keys: 1 } }).toArray())
      .map((doc) => [doc.device_id, doc.page_keys])
      .sort();
  const paged = devices.map((deviceUuid) => [deviceUuid, [1, 2, 3].map((length) => `${deploymentId}/${deviceUuid.slice(0, length)}`)]);
  expect(await keysOf()).toEqual(paged);
  // As the previous release stored them: no page keys, and no record of the migration.
  await models.DeviceEvent.collection.updateMany({ deployment_id: deploymentId } as never, { $unset: { page_keys: '' } });
  await models.DataMigration.deleteMany({ _id: 'status_page_keys' });

  await states.addStatusPageKeys();
  expect(await keysOf()).toEqual(paged);
  // Done once: finding documents without keys reads every status document, so a later start does not look again.
  await models.DeviceEvent.collection.updateMany({ deployment_id: deploymentId } as never, { $unset: { page_keys: '' } });
  await states.addStatusPageKeys();
  expect(await keysOf()).toEqual(devices.map((deviceUuid) => [deviceUuid]));
});

it('reads a page at one status from the devices at or above the lowest status shown as it, and finds the same devices as a read of every device', async () => {
  const deploymentId = randomUUID();
  // Each path a device took; the last status is its own (a status only rises).
  const paths = [['offered'], ['offered', 'downloaded'], ['offered', 'failed', 'confirmed'], ['offered', 'failed'], ['offered', 'failed', 'rolled_back'], ['offered', 'confirmed']];
  const devices = Array.from({ length: 60 }, (_, index) => ({ deviceUuid: randomUUID(), path: paths[index % paths.length]! }));
  for (const [index, { deviceUuid, path }] of devices.entries()) {
    for (const [step, status] of path.entries()) await record(deploymentId, deviceUuid, status, index + step);
  }
  const asStored = (state: DeviceStateRecord) => state;
  const everyDevice = await states.readStatesPage(deploymentId, { limit: 1000 }, asStored);
  // `read` counts the devices of each bucket read, a first small bucket as well: at least every device once.
  expect(everyDevice.read).toBeGreaterThanOrEqual(60);
  const offeredOnly = devices.filter(({ path }) => path.length === 1).length;

  for (const status of ['downloaded', 'failed', 'rolled_back', 'confirmed']) {
    const page = await states.readStatesPage(deploymentId, { limit: 1000, status, lowestStored: status }, asStored);
    expect([status, page.states]).toEqual([status, everyDevice.states.filter((state) => state.status === status)]);
    // The devices only offered are not read.
    expect([status, page.read <= everyDevice.read - offeredOnly]).toEqual([status, true]);
  }
  // A device silent in progress is shown failed: the read starts at the first status in progress.
  const silentAsFailed = (state: DeviceStateRecord) => (state.status === 'downloaded' ? { ...state, status: 'failed', reason: 'no_confirmation' } : state);
  const failed = await states.readStatesPage(deploymentId, { limit: 1000, status: 'failed', lowestStored: 'download_started' }, silentAsFailed);
  expect(failed.states).toEqual(everyDevice.states.map(silentAsFailed).filter((state) => state.status === 'failed'));
  expect(failed.states.filter((state) => state.reason === 'no_confirmation')).toHaveLength(10);
  // At `offered`, every device is read.
  const offered = await states.readStatesPage(deploymentId, { limit: 1000, status: 'offered', lowestStored: 'offered' }, asStored);
  expect([offered.states.length, offered.read]).toEqual([offeredOnly, everyDevice.read]);
});
