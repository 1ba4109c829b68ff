/**
 * Device health is summed per period of this length (docs/api.md, "Device health"): the chart's
 * resolution, and what a resume skips. Registry's checks and rollout's trial rollbacks count into
 * the same periods.
 */
export const HEALTH_PERIOD_MS = 15 * 60_000;

export function healthPeriodStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HEALTH_PERIOD_MS) * HEALTH_PERIOD_MS);
}
