import { seededRandom } from '@ota/testkit';
import { binomialUpperTail, HEALTH_REGRESSION_DEFAULTS, judgeHealth, validHealthRegression, type HealthComparison, type HealthFigures } from './health-regression';

function poisson(mean: number, next: () => number): number {
  // Knuth's product of uniforms: fine for the small means of one hour of a few hundred devices.
  const limit = Math.exp(-mean);
  let count = -1;
  for (let product = 1; product > limit; product *= next()) count += 1;
  return count;
}

describe('binomialUpperTail', () => {
  it('matches exact sums', () => {
    expect(binomialUpperTail(8, 10, 0.5)).toBeCloseTo(56 / 1024, 12);
    expect(binomialUpperTail(0, 10, 0.5)).toBe(1);
    expect(binomialUpperTail(11, 10, 0.5)).toBe(0);
    expect(binomialUpperTail(1, 3, 0.2)).toBeCloseTo(1 - 0.8 ** 3, 12);
    expect(binomialUpperTail(3, 3, 0.2)).toBeCloseTo(0.008, 12);
  });

  it('stays right far from the mean on both sides, where single terms underflow', () => {
    // k far below the mean: the tail is all but 1, not the 0 an underflowing first term would give.
    expect(binomialUpperTail(10, 100_000, 0.5)).toBe(1);
    expect(binomialUpperTail(90_000, 100_000, 0.5)).toBe(0);
    // Around the mean of a large n, half the mass either side.
    expect(binomialUpperTail(50_001, 100_000, 0.5)).toBeCloseTo(0.4987, 3);
  });
});

describe('judgeHealth', () => {
  const side = (devices: number, hours: number, abnormalResets: number): HealthFigures => ({ devices, deviceSeconds: hours * 3600, abnormalResets });

  it('does not judge before each side holds its minimum devices and hours', () => {
    const crashing = side(HEALTH_REGRESSION_DEFAULTS.minDevices - 1, 1_000, 500);
    expect(judgeHealth(HEALTH_REGRESSION_DEFAULTS, { updated: crashing, previous: side(900, 9_000, 9) })).toEqual({ judged: false, pValue: 1, regressed: false });
    expect(judgeHealth(HEALTH_REGRESSION_DEFAULTS, { updated: side(30, 49, 25), previous: side(900, 9_000, 9) }).judged).toBe(false);
    expect(judgeHealth(HEALTH_REGRESSION_DEFAULTS, { updated: side(30, 60, 30), previous: side(10, 9_000, 9) }).judged).toBe(false);
  });

  it('pauses a build that crashes every two hours against a fleet that resets once in four days', () => {
    const judgement = judgeHealth(HEALTH_REGRESSION_DEFAULTS, { updated: side(30, 60, 30), previous: side(970, 1_940, 19) });
    expect(judgement.judged).toBe(true);
    expect(judgement.regressed).toBe(true);
    expect(judgement.pValue).toBeLessThan(1e-10);
  });

  it('passes a build within the margin however large the sample', () => {
    const judgement = judgeHealth(HEALTH_REGRESSION_DEFAULTS, { updated: side(50_000, 1_000_000, 14_000), previous: side(50_000, 1_000_000, 10_000) });
    expect(judgement).toMatchObject({ judged: true, regressed: false });
    // Twice the previous rate is past the 50% margin, and enough resets show it (200 against 100 would not: p ≈ 0.009).
    expect(judgeHealth(HEALTH_REGRESSION_DEFAULTS, { updated: side(500, 100_000, 2_000), previous: side(500, 100_000, 1_000) }).regressed).toBe(true);
  });

  /**
   * The guardrail judges again and again as hours pass, so one false alarm over a run is what
   * matters: 200 fleets of 1,000 devices, 30 of them on a build exactly as healthy as the rest,
   * judged every simulated hour for three days.
   */
  it('never pauses a healthy build over 200 seeded fleets judged hourly for 72 hours', () => {
    const ratePerHour = 0.01;
    let pauses = 0;
    for (let seed = 1; seed <= 200; seed += 1) {
      const next = seededRandom(seed);
      const comparison: HealthComparison = { updated: side(30, 0, 0), previous: side(970, 0, 0) };
      for (let hour = 0; hour < 72; hour += 1) {
        for (const figures of [comparison.updated, comparison.previous]) {
          figures.deviceSeconds += figures.devices * 3600;
          figures.abnormalResets += poisson(figures.devices * ratePerHour, next);
        }
        if (judgeHealth(HEALTH_REGRESSION_DEFAULTS, comparison).regressed) {
          pauses += 1;
          break;
        }
      }
    }
    expect(pauses).toBe(0);
  });

  it('catches a crash loop within three simulated hours in each of 200 seeded fleets', () => {
    for (let seed = 1; seed <= 200; seed += 1) {
      const next = seededRandom(seed);
      const comparison: HealthComparison = { updated: side(30, 0, 0), previous: side(970, 0, 0) };
      let pausedAt: number | undefined;
      for (let hour = 1; hour <= 3 && pausedAt === undefined; hour += 1) {
        comparison.updated.deviceSeconds += 30 * 3600;
        comparison.updated.abnormalResets += poisson(30 * 0.5, next);
        comparison.previous.deviceSeconds += 970 * 3600;
        comparison.previous.abnormalResets += poisson(970 * 0.01, next);
        if (judgeHealth(HEALTH_REGRESSION_DEFAULTS, comparison).regressed) pausedAt = hour;
      }
      expect(pausedAt).toBeDefined();
    }
  });
});

describe('validHealthRegression', () => {
  it('names the field it refuses', () => {
    expect(() => validHealthRegression({ ...HEALTH_REGRESSION_DEFAULTS, significance: 0.5 })).toThrow('health_regression.significance');
    expect(() => validHealthRegression({ ...HEALTH_REGRESSION_DEFAULTS, minDevices: 0 })).toThrow('health_regression.min_devices');
    expect(() => validHealthRegression({ ...HEALTH_REGRESSION_DEFAULTS, marginPercent: -1 })).toThrow('health_regression.margin_percent');
    expect(() => validHealthRegression({ ...HEALTH_REGRESSION_DEFAULTS, minDeviceHours: 0 })).toThrow('health_regression.min_device_hours');
    expect(validHealthRegression(HEALTH_REGRESSION_DEFAULTS)).toEqual(HEALTH_REGRESSION_DEFAULTS);
  });
});
