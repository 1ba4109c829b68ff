import { isKnownTimeZone, parseLocalTime, validMaintenanceSchedule, windowStateAt, type MaintenanceSchedule } from './maintenance-windows';

// Weekly windows read in a zone's local time, across the changes to and from summer time, and in
// a device's own offset; the clock is each test's own instant.

const at = (iso: string) => new Date(iso);
const inZone = (timeZone: string, windows: MaintenanceSchedule['windows'], inDeviceLocalTime = false): MaintenanceSchedule => ({ windows, timeZone, inDeviceLocalTime });

test('a weekly window in UTC is open from its start, for its length, and closed either side to the minute', () => {
  // 2026-11-30 is a Monday.
  const schedule = inZone('UTC', [{ days: ['mon'], start: '02:00', durationMinutes: 120 }]);
  expect(windowStateAt(schedule, at('2026-11-30T01:59:59Z'))).toEqual({ open: false, opensAt: at('2026-11-30T02:00:00Z') });
  expect(windowStateAt(schedule, at('2026-11-30T02:00:00Z'))).toEqual({ open: true, closesAt: at('2026-11-30T04:00:00Z') });
  expect(windowStateAt(schedule, at('2026-11-30T03:59:59Z'))).toEqual({ open: true, closesAt: at('2026-11-30T04:00:00Z') });
  expect(windowStateAt(schedule, at('2026-11-30T04:00:00Z'))).toEqual({ open: false, opensAt: at('2026-12-07T02:00:00Z') });
  // Asked again about earlier instants, the answers are theirs, not the latest one's.
  expect(windowStateAt(schedule, at('2026-11-30T03:00:00Z'))).toEqual({ open: true, closesAt: at('2026-11-30T04:00:00Z') });
  expect(windowStateAt(schedule, at('2026-11-30T01:00:00Z'))).toEqual({ open: false, opensAt: at('2026-11-30T02:00:00Z') });
});

test('a window that runs past midnight is open on the next day, and the week wraps', () => {
  // Saturdays 23:00 for three hours; 2026-11-28 is a Saturday.
  const schedule = inZone('UTC', [{ days: ['sat'], start: '23:00', durationMinutes: 180 }]);
  expect(windowStateAt(schedule, at('2026-11-29T01:00:00Z'))).toEqual({ open: true, closesAt: at('2026-11-29T02:00:00Z') });
  expect(windowStateAt(schedule, at('2026-11-29T02:00:00Z'))).toEqual({ open: false, opensAt: at('2026-12-05T23:00:00Z') });
  // Sundays only, asked on a Saturday: tomorrow.
  expect(windowStateAt(inZone('UTC', [{ days: ['sun'], start: '00:30', durationMinutes: 30 }]), at('2026-11-28T12:00:00Z'))).toEqual({ open: false, opensAt: at('2026-11-29T00:30:00Z') });
});

test('a zone\'s windows follow its clocks across the change to summer time and back', () => {
  // Berlin: 02:00 becomes 03:00 on 2026-03-29; 03:00 becomes 02:00 on 2026-10-25.
  const nightly = inZone('Europe/Berlin', [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], start: '01:00', durationMinutes: 60 }]);
  expect(windowStateAt(nightly, at('2026-03-28T00:30:00Z'))).toEqual({ open: true, closesAt: at('2026-03-28T01:00:00Z') }); // 01:30 CET
  expect(windowStateAt(nightly, at('2026-03-28T01:00:00Z'))).toEqual({ open: false, opensAt: at('2026-03-29T00:00:00Z') });
  expect(windowStateAt(nightly, at('2026-03-29T01:00:00Z'))).toEqual({ open: false, opensAt: at('2026-03-29T23:00:00Z') }); // 01:00 CEST
  expect(windowStateAt(nightly, at('2026-10-24T23:00:00Z'))).toEqual({ open: true, closesAt: at('2026-10-25T00:00:00Z') });
  expect(windowStateAt(nightly, at('2026-10-25T00:00:00Z'))).toEqual({ open: false, opensAt: at('2026-10-26T00:00:00Z') }); // 01:00 CET again
});

test('a start the change to summer time skips opens after the jump, and one the change back repeats opens the first time', () => {
  // New York: 02:00 becomes 03:00 on 2026-03-08, 02:00 becomes 01:00 on 2026-11-01 (both Sundays).
  const skipped = inZone('America/New_York', [{ days: ['sun'], start: '02:30', durationMinutes: 60 }]);
  expect(windowStateAt(skipped, at('2026-03-08T06:00:00Z'))).toEqual({ open: false, opensAt: at('2026-03-08T07:30:00Z') }); // 03:30 EDT
  const repeated = inZone('America/New_York', [{ days: ['sun'], start: '01:30', durationMinutes: 60 }]);
  expect(windowStateAt(repeated, at('2026-11-01T04:00:00Z'))).toEqual({ open: false, opensAt: at('2026-11-01T05:30:00Z') }); // the first 01:30, EDT
  // Its hour is an hour of real time: it closes at the second 01:30.
  expect(windowStateAt(repeated, at('2026-11-01T06:00:00Z'))).toEqual({ open: true, closesAt: at('2026-11-01T06:30:00Z') });
});

test('in device local time a device is judged by the offset it reports, and one that reports none by the zone', () => {
  const schedule = inZone('UTC', [{ days: ['mon'], start: '02:00', durationMinutes: 60 }], true);
  // 02:15 in India (+05:30) on Monday 2026-11-30 is 20:45 UTC on the Sunday.
  expect(windowStateAt(schedule, at('2026-11-29T20:45:00Z'), 330)).toEqual({ open: true, closesAt: at('2026-11-29T21:30:00Z') });
  expect(windowStateAt(schedule, at('2026-11-29T20:45:00Z'))).toEqual({ open: false, opensAt: at('2026-11-30T02:00:00Z') });
  // West of UTC: 02:00 at -08:00 is 10:00 UTC.
  expect(windowStateAt(schedule, at('2026-11-30T09:00:00Z'), -480)).toEqual({ open: false, opensAt: at('2026-11-30T10:00:00Z') });
});

test('several windows: open in any, and the nearest opening otherwise; no windows is always open', () => {
  const schedule = inZone('UTC', [
    { days: ['tue', 'thu'], start: '03:00', durationMinutes: 60 },
    { days: ['wed'], start: '22:00', durationMinutes: 30 },
  ]);
  // 2026-12-01 is a Tuesday.
  expect(windowStateAt(schedule, at('2026-12-01T05:00:00Z'))).toEqual({ open: false, opensAt: at('2026-12-02T22:00:00Z') });
  expect(windowStateAt(schedule, at('2026-12-02T22:10:00Z'))).toEqual({ open: true, closesAt: at('2026-12-02T22:30:00Z') });
  expect(windowStateAt(inZone('UTC', []), at('2026-12-01T05:00:00Z')).open).toBe(true);
});

test('local times and zones are read strictly', () => {
  expect(parseLocalTime('00:00')).toEqual({ hour: 0, minute: 0 });
  expect(parseLocalTime('23:59')).toEqual({ hour: 23, minute: 59 });
  for (const bad of ['24:00', '7:00', '07:60', '0700', '07:00:00', '']) expect(parseLocalTime(bad)).toBeUndefined();
  expect(isKnownTimeZone('Europe/Berlin')).toBe(true);
  expect(isKnownTimeZone('UTC')).toBe(true);
  expect(isKnownTimeZone('Mars/Olympus_Mons')).toBe(false);
});

test('a schedule that makes no sense is refused with the field named', () => {
  const window = { days: ['mon'] as const, start: '02:00', durationMinutes: 60 };
  const refusal = (schedule: MaintenanceSchedule) => {
    try {
      validMaintenanceSchedule(schedule);
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };
  expect(refusal(inZone('Europe/Berlin', [window]))).toBe('accepted');
  expect(refusal(inZone('Mars/Olympus_Mons', [window]))).toMatch(/^maintenance_windows\.time_zone names no time zone/);
  expect(refusal(inZone('UTC', []))).toMatch(/^maintenance_windows\.windows holds no window/);
  expect(refusal(inZone('UTC', [{ ...window, start: '24:00' }]))).toMatch(/^maintenance_windows\.windows\[0\]\.start/);
  expect(refusal(inZone('UTC', [window, { ...window, days: [] }]))).toMatch(/^maintenance_windows\.windows\[1\]\.days names no day/);
  expect(refusal(inZone('UTC', [{ ...window, days: ['mon', 'mon'] }]))).toMatch(/names a day twice/);
  expect(refusal(inZone('UTC', [{ ...window, days: ['someday' as never] }]))).toMatch(/names "someday"/);
  expect(refusal(inZone('UTC', [{ ...window, durationMinutes: 0 }]))).toMatch(/duration_minutes must be an integer from 1 to 10080/);
  expect(refusal(inZone('UTC', Array.from({ length: 21 }, () => window)))).toMatch(/at most 20 windows/);
});

test('a schedule keeps its zone under its canonical name, whatever its spelling or alias', () => {
  const windows = [{ days: ['sat'], start: '02:00', durationMinutes: 60 }];
  const zoneOf = (timeZone: string) => validMaintenanceSchedule({ timeZone, inDeviceLocalTime: false, windows }).timeZone;
  expect(zoneOf('europe/berlin')).toBe('Europe/Berlin');
  expect(zoneOf('US/Pacific-New')).toBe('America/Los_Angeles');
  expect(zoneOf('UTC')).toBe('UTC');
});
