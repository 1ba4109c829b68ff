import { invalidArgument } from '@ota/errors';

/**
 * The health guardrail (docs/api.md, "Device health"): pause when devices on the deployment's build
 * reset abnormally (a crash, a watchdog, a brownout) more often per hour of running than the
 * devices it targets that still run an earlier build, by more than `marginPercent`, at the one-sided
 * significance `significance`, once each side has `minDevices` devices and `minDeviceHours` hours.
 */
export interface HealthRegressionGuardrail {
  marginPercent: number;
  significance: number;
  minDevices: number;
  minDeviceHours: number;
}

/** What a `health_regression: {}` sent without its fields means. */
export const HEALTH_REGRESSION_DEFAULTS: HealthRegressionGuardrail = { marginPercent: 50, significance: 0.001, minDevices: 20, minDeviceHours: 50 };

/** The two sides a device's health counts on: the deployment's build, or an earlier one it targets. */
export const HEALTH_SIDES = ['updated', 'previous'] as const;
export type HealthSide = (typeof HEALTH_SIDES)[number];

/** One side's sums over the judged time. */
export interface HealthFigures {
  /** Devices counted on this side: installed the build (updated), or ran an earlier one from before the start (previous). */
  devices: number;
  /** Hours run, summed over the devices, from what they reported. */
  deviceSeconds: number;
  abnormalResets: number;
}

export type HealthComparison = Record<HealthSide, HealthFigures>;

/** One period's health on one side of a deployment, as registry's checks counted it. */
export interface HealthTally extends HealthFigures {
  projectId: string;
  deploymentId: string;
  side: HealthSide;
  periodStart: Date;
  /** The registry replica that counted it; empty in sums over every replica. */
  source: string;
}

export const NO_HEALTH: HealthFigures = { devices: 0, deviceSeconds: 0, abnormalResets: 0 };

export function validHealthRegression(guardrail: HealthRegressionGuardrail): HealthRegressionGuardrail {
  const at = 'health_regression';
  if (!(guardrail.marginPercent >= 0 && guardrail.marginPercent <= 1000)) throw invalidArgument(`${at}.margin_percent must be from 0 to 1000`);
  if (!(guardrail.significance > 0 && guardrail.significance <= 0.1)) throw invalidArgument(`${at}.significance must be above 0 and at most 0.1`);
  if (!Number.isInteger(guardrail.minDevices) || guardrail.minDevices < 1) throw invalidArgument(`${at}.min_devices must be an integer of at least 1`);
  if (!(guardrail.minDeviceHours > 0)) throw invalidArgument(`${at}.min_device_hours must be above 0`);
  return guardrail;
}

/** Abnormal resets per device-hour on one side; 0 before it ran. */
export function resetRate(side: HealthFigures): number {
  return side.deviceSeconds > 0 ? (side.abnormalResets * 3600) / side.deviceSeconds : 0;
}

export interface HealthJudgement {
  /** Both sides hold their minimum devices and hours, so the test was run. */
  judged: boolean;
  /** The one-sided p-value of "the updated build's rate is at most (1 + margin) times the previous builds'"; 1 unjudged. */
  pValue: number;
  regressed: boolean;
}

/**
 * The exact conditional test of two Poisson rates: given n = x₁ + x₂ abnormal resets over t₁ and t₂
 * hours, under rate₁ = (1 + m)·rate₂ the updated side's count is binomial with n and
 * p₀ = (1 + m)·t₁ / ((1 + m)·t₁ + t₂). The p-value is P(X ≥ x₁); below `significance`, rate₁ is
 * judged more than (1 + m) times rate₂. Rates at the margin or below pass whatever the sample.
 */
export function judgeHealth(guardrail: HealthRegressionGuardrail, comparison: HealthComparison): HealthJudgement {
  const { updated, previous } = comparison;
  const hours = (side: HealthFigures) => side.deviceSeconds / 3600;
  const enough = (side: HealthFigures) => side.devices >= guardrail.minDevices && hours(side) >= guardrail.minDeviceHours;
  if (!enough(updated) || !enough(previous)) return { judged: false, pValue: 1, regressed: false };
  const weighted = (1 + guardrail.marginPercent / 100) * hours(updated);
  const p0 = weighted / (weighted + hours(previous));
  const pValue = binomialUpperTail(updated.abnormalResets, updated.abnormalResets + previous.abnormalResets, p0);
  return { judged: true, pValue, regressed: pValue < guardrail.significance };
}

/** P(X ≥ k) for X binomial with `n` trials of probability `p`. */
export function binomialUpperTail(k: number, n: number, p: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  // Summed from the side of the mean that k is on, where the terms fall away from it: a first
  // term far from the mean may round to 0, and the sum is then 0 (or 1) as it should be.
  if (k <= n * p) return Math.max(0, 1 - binomialTerms(k - 1, n, p, -1));
  return Math.min(1, binomialTerms(k, n, p, 1));
}

/** P(X = from) + P(X = from ± 1) + … going `step` away from the mean, until a term no longer moves the sum. */
function binomialTerms(from: number, n: number, p: number, step: 1 | -1): number {
  const odds = p / (1 - p);
  let term = Math.exp(logChoose(n, from) + from * Math.log(p) + (n - from) * Math.log1p(-p));
  let sum = 0;
  for (let i = from; i >= 0 && i <= n; i += step) {
    sum += term;
    if (term <= sum * 1e-16) break;
    term *= step === 1 ? ((n - i) / (i + 1)) * odds : (i / (n - i + 1)) / odds;
  }
  return sum;
}

function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

const EXACT_LOG_FACTORIALS = 256;
const logFactorials = [0];
for (let i = 1; i < EXACT_LOG_FACTORIALS; i += 1) logFactorials.push(logFactorials[i - 1]! + Math.log(i));

/** ln n!: summed exactly below 256, else Stirling's series (error under 1e-13 there). */
function logFactorial(n: number): number {
  if (n < EXACT_LOG_FACTORIALS) return logFactorials[n]!;
  return n * Math.log(n) - n + 0.5 * Math.log(2 * Math.PI * n) + 1 / (12 * n) - 1 / (360 * n ** 3);
}
