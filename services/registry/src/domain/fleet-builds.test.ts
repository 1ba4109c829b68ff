import { FleetSnapshots, periodStart, type FleetBuildStore, type FleetScope, type FleetSnapshot } from './fleet-builds';

// The round's bookkeeping; the counts themselves are read from the real store
// (test/fleet-snapshots.int.test.ts).

/** A store of two projects that records what the round asks of it; `claimed` periods are another replica's. */
function recordingStore(claimed: Set<string> = new Set()) {
  const saved: FleetSnapshot[] = [];
  const forgotten: Array<[string, string]> = [];
  const store: FleetBuildStore = {
    scopeExists: async () => true,
    countBuilds: async (_projectId: string, scope: FleetScope) => [{ buildNumber: scope.kind === 'project' ? 7 : 3, devices: 1 }],
    projectsWithScopes: async () => [
      { projectId: 'p1', channelIds: ['c1'], groupIds: ['g1', 'g2'] },
      { projectId: 'p2', channelIds: [], groupIds: [] },
    ],
    claimPeriod: async (projectId: string, at: Date) => {
      const key = `${projectId}@${at.toISOString()}`;
      if (claimed.has(key)) return false;
      claimed.add(key);
      return true;
    },
    saveSnapshot: async (snapshot) => void saved.push(snapshot),
    snapshots: async () => [],
    forgetBefore: async (projectId, before) => void forgotten.push([projectId, before.toISOString()]),
  };
  return { store, saved, forgotten, claimed };
}

test('periods are aligned to the epoch, so every replica names the same one', () => {
  expect(periodStart(new Date('2027-01-04T10:59:59.999Z'), 60).toISOString()).toBe('2027-01-04T10:00:00.000Z');
  expect(periodStart(new Date('2027-01-04T10:59:59.999Z'), 15).toISOString()).toBe('2027-01-04T10:45:00.000Z');
});

test('a round snapshots every scope of each project it claims, forgets what is past the retention, and runs once a period', async () => {
  let clock = new Date('2027-01-04T10:20:00Z');
  const { store, saved, forgotten, claimed } = recordingStore(new Set(['p2@2027-01-04T10:00:00.000Z']));
  const snapshots = new FleetSnapshots(store, { periodMinutes: 60, retentionDays: 90 }, (error) => { throw error; }, () => clock);
  // p2's period was another replica's.
  expect(await snapshots.takeDue()).toBe(1);
  expect(saved.map((snapshot) => [snapshot.projectId, snapshot.scope, snapshot.at.toISOString()])).toEqual([
    ['p1', { kind: 'project' }, '2027-01-04T10:00:00.000Z'],
    ['p1', { kind: 'channel', id: 'c1' }, '2027-01-04T10:00:00.000Z'],
    ['p1', { kind: 'group', id: 'g1' }, '2027-01-04T10:00:00.000Z'],
    ['p1', { kind: 'group', id: 'g2' }, '2027-01-04T10:00:00.000Z'],
  ]);
  expect(forgotten).toEqual([['p1', '2026-10-06T10:20:00.000Z']]);
  // The rest of the period asks nothing more of the store.
  const claims = claimed.size;
  clock = new Date('2027-01-04T10:59:00Z');
  expect(await snapshots.takeDue()).toBe(0);
  expect(claimed.size).toBe(claims);
  clock = new Date('2027-01-04T11:00:00Z');
  expect(await snapshots.takeDue()).toBe(2);
});
