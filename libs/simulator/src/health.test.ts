import { FleetHealth } from './health';

test('a healthy fleet resets at about its rate, and the same seed repeats the same run', () => {
  const run = (seed: string) => {
    const fleet = new FleetHealth({ seed, abnormalPerHour: 0.05 });
    const ids = Array.from({ length: 1000 }, (_, i) => `d-${i}`);
    for (const id of ids) fleet.reportOf(id, 1);
    fleet.advance(10);
    return ids.reduce((sum, id) => sum + fleet.reportOf(id, 1).abnormal_boots, 0);
  };
  // 1,000 devices × 10 hours × 0.05: about 500 (a standard deviation is about 22).
  expect(run('a')).toBeGreaterThan(400);
  expect(run('a')).toBeLessThan(600);
  expect(run('a')).toBe(run('a'));
  expect(run('a')).not.toBe(run('b'));
});

test('a device on a crash-looping build panics once a period after it installs it, and an install starts its counts afresh', () => {
  const fleet = new FleetHealth({ seed: 's', abnormalPerHour: 0, crashLoops: new Map([[2, 2]]) });
  expect(fleet.reportOf('d', 1)).toMatchObject({ boots: 1, abnormal_boots: 0, uptime_seconds: 86_400, reset_reason: 'power_on' });
  fleet.installed('d', 2);
  expect(fleet.reportOf('d', 2)).toMatchObject({ boots: 1, abnormal_boots: 0, uptime_seconds: 0, reset_reason: 'software' });
  fleet.advance(10);
  expect(fleet.reportOf('d', 2)).toMatchObject({ boots: 6, abnormal_boots: 5, uptime_seconds: 36_000, reset_reason: 'panic' });
});
