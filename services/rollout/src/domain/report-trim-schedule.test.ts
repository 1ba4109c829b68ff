import { ReportTrimSchedule } from './report-trim-schedule';

const dueOf = (schedule: ReportTrimSchedule, deviceId: string, reports: number) => Array.from({ length: reports }, () => schedule.due(deviceId));

test('a device is trimmed on its first report, then on every tenth', () => {
  const schedule = new ReportTrimSchedule(10, 1000);
  const due = dueOf(schedule, 'a', 31);
  expect(due.flatMap((isDue, index) => (isDue ? [index] : []))).toEqual([0, 10, 20, 30]);
});

test('devices are counted apart', () => {
  const schedule = new ReportTrimSchedule(3, 1000);
  expect([schedule.due('a'), schedule.due('b'), schedule.due('a'), schedule.due('a'), schedule.due('b'), schedule.due('a')]).toEqual([true, true, false, false, false, true]);
});

test('a device forgotten beyond maxDevices is trimmed again on its next report', () => {
  const schedule = new ReportTrimSchedule(10, 2);
  dueOf(schedule, 'a', 3);
  schedule.due('b');
  schedule.due('c');
  expect(schedule.due('a')).toBe(true);
  expect(schedule.due('c')).toBe(false);
});
