import { connectMongo } from '@ota/mongo';
import { MANIFEST, api, randomBinary, setupProject, takeOfferedBuild, testStack, uploadForm } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerModels } from '../src/adapters/mongo/models';
import { MongoFleetSnapshotStore } from '../src/adapters/mongo/fleet-snapshot-store';
import { FleetSnapshots, type FleetBuildStore } from '../src/domain/fleet-builds';

// Which builds the fleet runs, over time (docs/api.md, "Fleet builds"): snapshots of the stack's
// own registry database, taken by two replicas with a clock of the test's, once per period; and
// the API's answer of now and of the history, per project, channel and group.

const registryDatabase = () => String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'registry');
/** The test's clock reads 2027; the stack's own registry takes snapshots of 2026, which the test leaves out. */
const TEST_YEAR = new Date('2027-01-01T00:00:00Z');
const FAR = new Date('2100-01-01T00:00:00Z');
let mongo: Connection;
let store: MongoFleetSnapshotStore;

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: registryDatabase() });
  store = new MongoFleetSnapshotStore(registerModels(mongo));
});
afterAll(() => mongo.close());

test('two replicas take each period once; counts per build of the project, a channel and a group; the API answers now and the history', async () => {
  const f = await setupProject({ name: 'fleet builds' });
  const base = `/api/v1/projects/${f.project.id}`;
  const release = async (version: string) => {
    const released = await api('POST', `${base}/release/`, { token: f.user.token, body: uploadForm({ ...MANIFEST, version_label: version }, randomBinary(64)) });
    expect(released.status).toBe(201);
  };
  // Four devices take build 1; one of them build 2 too, then moves to the channel beta.
  await release('1.0.0');
  for (const deviceId of ['a', 'b', 'c', 'd']) expect(await takeOfferedBuild(f, deviceId, 0)).toBe(1);
  await release('2.0.0');
  expect(await takeOfferedBuild(f, 'd', 1)).toBe(2);
  const devices = (await api('GET', `${base}/devices/`, { token: f.user.token })).body as Array<{ id: string; device_id: string }>;
  const uuidOf = (deviceId: string) => devices.find((device) => device.device_id === deviceId)!.id;
  const beta = (await api('POST', `${base}/channels/`, { token: f.user.token, json: { name: 'beta' } })).body;
  expect((await api('PATCH', `${base}/devices/${uuidOf('d')}/`, { token: f.user.token, json: { channel_id: beta.id } })).status).toBe(200);
  const group = (await api('POST', `${base}/groups/`, { token: f.user.token, json: { name: 'lab' } })).body;
  for (const deviceId of ['a', 'd']) expect((await api('POST', `${base}/groups/${group.id}/members/`, { token: f.user.token, json: { device_id: uuidOf(deviceId) } })).status).toBeLessThan(300);

  // Two replicas whose clock reads the same period; the settings are the defaults.
  let clock = new Date('2027-01-04T10:20:00Z');
  // The stack's database holds every test's projects: the rounds here take this test's one only.
  const ours: FleetBuildStore = { ...bound(store), projectsWithScopes: async () => (await store.projectsWithScopes()).filter((entry) => entry.projectId === f.project.id) };
  const replicas = [0, 1].map(() => new FleetSnapshots(ours, { periodMinutes: 60, retentionDays: 90 }, (error) => { throw error; }, () => clock));
  const taken = await Promise.all(replicas.map((replica) => replica.takeDue()));
  // The project is one replica's, never both's.
  const snapshotsOfProject = async () => (await store.snapshots(f.project.id, { kind: 'project' }, TEST_YEAR, FAR)).map((snapshot) => [snapshot.at.toISOString(), snapshot.builds]);
  expect(taken.reduce((sum, count) => sum + count, 0)).toBe(1);
  expect(await snapshotsOfProject()).toEqual([['2027-01-04T10:00:00.000Z', [{ buildNumber: 1, devices: 3 }, { buildNumber: 2, devices: 1 }]]]);
  // A later round in the same period takes nothing again.
  expect(await replicas[0]!.takeDue()).toBe(0);

  // The devices move on; the next period's snapshot says so.
  for (const deviceId of ['a', 'b']) expect(await takeOfferedBuild(f, deviceId, 1)).toBe(2);
  clock = new Date('2027-01-04T11:05:00Z');
  await Promise.all(replicas.map((replica) => replica.takeDue()));
  expect(await snapshotsOfProject()).toEqual([
    ['2027-01-04T10:00:00.000Z', [{ buildNumber: 1, devices: 3 }, { buildNumber: 2, devices: 1 }]],
    ['2027-01-04T11:00:00.000Z', [{ buildNumber: 1, devices: 1 }, { buildNumber: 2, devices: 3 }]],
  ]);
  expect((await store.snapshots(f.project.id, { kind: 'channel', id: beta.id }, TEST_YEAR, FAR)).map((snapshot) => snapshot.builds)).toEqual([[{ buildNumber: 2, devices: 1 }], [{ buildNumber: 2, devices: 1 }]]);
  expect((await store.snapshots(f.project.id, { kind: 'group', id: group.id }, TEST_YEAR, FAR)).map((snapshot) => snapshot.builds)).toEqual([
    [{ buildNumber: 1, devices: 1 }, { buildNumber: 2, devices: 1 }],
    [{ buildNumber: 2, devices: 2 }],
  ]);

  // The API: now counted on the request, the history within `days` (these snapshots are dated 2027).
  const answer = await api('GET', `${base}/fleet/builds/?group_id=${group.id}&days=366`, { token: f.apiToken });
  expect(answer.status).toBe(200);
  expect(answer.body.now.builds).toEqual([{ build_number: 2, devices: 2 }]);
  const whole = await api('GET', `${base}/fleet/builds/`, { token: f.apiToken });
  expect(whole.body.now.builds).toEqual([{ build_number: 1, devices: 1 }, { build_number: 2, devices: 3 }]);
  // An inactive device runs nothing the chart counts.
  expect((await api('PATCH', `${base}/devices/${uuidOf('c')}/`, { token: f.user.token, json: { active: false } })).status).toBe(200);
  expect((await api('GET', `${base}/fleet/builds/`, { token: f.apiToken })).body.now.builds).toEqual([{ build_number: 2, devices: 3 }]);

  // Refusals: both scopes, another project's group, a day count out of range.
  const other = await setupProject();
  for (const [query, status] of [[`?channel_id=${beta.id}&group_id=${group.id}`, 400], [`?days=0`, 422], [`?days=x`, 422]] as const) {
    const refused = await api('GET', `${base}/fleet/builds/${query}`, { token: f.apiToken });
    expect([query, refused.status, typeof refused.body.detail]).toEqual([query, status, status === 422 ? 'object' : 'string']);
  }
  expect((await api('GET', `/api/v1/projects/${other.project.id}/fleet/builds/?group_id=${group.id}`, { token: other.apiToken })).status).toBe(404);

  // Past the retention a project's snapshots are forgotten (each round does so for the projects it
  // takes: fleet-builds.test.ts); a round at this clock would forget every other test's too.
  await store.forgetBefore(f.project.id, new Date('2027-01-04T10:30:00Z'));
  expect((await snapshotsOfProject()).map(([at]) => at)).toEqual(['2027-01-04T11:00:00.000Z']);
});

/** The store's methods, bound to it, to narrow one of them. */
function bound(store: MongoFleetSnapshotStore): FleetBuildStore {
  return {
    scopeExists: store.scopeExists.bind(store),
    countBuilds: store.countBuilds.bind(store),
    projectsWithScopes: store.projectsWithScopes.bind(store),
    claimPeriod: store.claimPeriod.bind(store),
    saveSnapshot: store.saveSnapshot.bind(store),
    snapshots: store.snapshots.bind(store),
    forgetBefore: store.forgetBefore.bind(store),
  };
}
