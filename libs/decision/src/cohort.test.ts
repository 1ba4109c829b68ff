import { randomUUID } from 'node:crypto';
import { admittedByRollout, cohortBucket } from './cohort';

const deviceIds = Array.from({ length: 100_000 }, (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);

describe('cohort buckets', () => {
  it('are the same for the same deployment and device', () => {
    const deployment = randomUUID();
    expect(cohortBucket(deployment, deviceIds[7]!)).toBe(cohortBucket(deployment, deviceIds[7]!));
  });

  it('admit within one point of the target share over 100,000 devices', () => {
    const deployment = randomUUID();
    for (const percentage of [1, 10, 25, 50, 90]) {
      const admitted = deviceIds.filter((id) => admittedByRollout(deployment, id, percentage)).length;
      expect(Math.abs((admitted / deviceIds.length) * 100 - percentage)).toBeLessThan(1);
    }
  });

  it('only add devices when the percentage is raised', () => {
    const deployment = randomUUID();
    const at10 = new Set(deviceIds.filter((id) => admittedByRollout(deployment, id, 10)));
    const at50 = new Set(deviceIds.filter((id) => admittedByRollout(deployment, id, 50)));
    for (const id of at10) expect(at50.has(id)).toBe(true);
    expect(deviceIds.every((id) => admittedByRollout(deployment, id, 100))).toBe(true);
    expect(deviceIds.some((id) => admittedByRollout(deployment, id, 0))).toBe(false);
  });

  it('draw independent cohorts for two deployments', () => {
    const [first, second] = [randomUUID(), randomUUID()];
    const inFirst = deviceIds.filter((id) => admittedByRollout(first, id, 10));
    const inBoth = inFirst.filter((id) => admittedByRollout(second, id, 10)).length;
    // Independent draws overlap in about 10% of 10%: 1% of the fleet, not 10%.
    expect(Math.abs((inBoth / deviceIds.length) * 100 - 1)).toBeLessThan(0.3);
  });
});
