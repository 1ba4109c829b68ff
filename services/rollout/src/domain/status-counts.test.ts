import { addCounts, countChange, NO_COUNTS, PendingCountDeltas } from './status-counts';

const stored = (status: string, reason = '') => ({ status, reason, newlyStored: true });
const repeated = (status: string, reason = '') => ({ status, reason, newlyStored: false });
const step = (from: string, to: string) => ({ from, to });

test('a device moving up a step leaves its old status for the new one', () => {
  expect(countChange(stored('downloaded'), step('download_started', 'downloaded')).byStatus).toEqual(new Map([['downloaded', 1], ['download_started', -1]]));
  // Its first status: nothing to leave (pending is not counted).
  expect(countChange(stored('offered'), step('pending', 'offered')).byStatus).toEqual(new Map([['offered', 1]]));
});

test('an event that took no step changes no status count', () => {
  // A late `downloaded` after `confirmed` is stored, but the device stays confirmed.
  expect(countChange(stored('downloaded'), null).byStatus.size).toBe(0);
  expect(countChange(repeated('confirmed'), null).byStatus.size).toBe(0);
  // A newly stored status whose step another report took first (it raced a higher one).
  expect(countChange(stored('flashed'), null).byStatus.size).toBe(0);
});

test('every failed report is a failure, rolled_back only the first time', () => {
  expect(countChange(stored('failed', 'flash_write_failed'), step('flashed', 'failed')).failuresByReason).toEqual(new Map([['flash_write_failed', 1]]));
  // The second failure of the same device: its status stays, the failure counts again.
  const again = countChange(repeated('failed', 'flash_write_failed'), null);
  expect(again.failuresByReason).toEqual(new Map([['flash_write_failed', 1]]));
  expect(again.byStatus.size).toBe(0);
  expect(countChange(stored('rolled_back', 'boot_failed'), step('reboot', 'rolled_back')).failuresByReason).toEqual(new Map([['boot_failed', 1]]));
  expect(countChange(repeated('rolled_back', 'boot_failed'), null).failuresByReason.size).toBe(0);
});

test('pending changes add up per deployment and second, and drop what cancels out', () => {
  const pending = new PendingCountDeltas();
  const at = new Date('2026-11-24T03:00:00.250Z');
  pending.add('d1', at, countChange(stored('offered'), step('pending', 'offered')));
  pending.add('d1', new Date('2026-11-24T03:00:00.900Z'), countChange(stored('download_started'), step('offered', 'download_started')));
  pending.add('d1', new Date('2026-11-24T03:00:01.100Z'), countChange(stored('offered'), step('pending', 'offered')));
  pending.add('d2', at, NO_COUNTS());
  const taken = pending.take();
  expect(pending.size).toBe(0);
  expect(taken).toEqual([
    { deploymentId: 'd1', second: new Date('2026-11-24T03:00:00Z'), byStatus: new Map([['download_started', 1]]), failuresByReason: new Map() },
    { deploymentId: 'd1', second: new Date('2026-11-24T03:00:01Z'), byStatus: new Map([['offered', 1]]), failuresByReason: new Map() },
  ]);
  pending.restore(taken);
  expect(pending.take()).toEqual(taken);
});

test('counts add key by key', () => {
  const sum = addCounts(
    { byStatus: new Map([['offered', 3]]), failuresByReason: new Map([['x', 1]]) },
    { byStatus: new Map([['offered', -3], ['confirmed', 2]]), failuresByReason: new Map([['x', 2]]) },
  );
  expect(sum).toEqual({ byStatus: new Map([['confirmed', 2]]), failuresByReason: new Map([['x', 3]]) });
});
