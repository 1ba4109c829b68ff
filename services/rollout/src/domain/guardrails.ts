import { invalidArgument } from '@ota/errors';
import { isInProgress, rankOf } from './device-status';
import { judgeHealth, resetRate, validHealthRegression, type HealthComparison, type HealthRegressionGuardrail } from './health-regression';

/** Pause when, of at least `minFinished` finished devices, `percent` or more failed. */
export interface FailureThreshold {
  percent: number;
  minFinished: number;
}

/** Pause when `count` failures with `reason` arrive within `windowSeconds`. */
export interface ReasonLimit {
  reason: string;
  count: number;
  windowSeconds: number;
}

export interface Guardrails {
  failureThreshold: FailureThreshold | null;
  reasonLimits: ReasonLimit[];
  /** A device silent this long after reporting progress counts as failed (`no_confirmation`). */
  confirmTimeoutSeconds: number | null;
  /** Pause when the build's devices reset abnormally more often than those not yet updated (health-regression.ts). */
  healthRegression: HealthRegressionGuardrail | null;
}

export const NO_GUARDRAILS: Guardrails = { failureThreshold: null, reasonLimits: [], confirmTimeoutSeconds: null, healthRegression: null };

/** The reason a device that went silent after reporting progress is counted as failed with. */
export const NO_CONFIRMATION = 'no_confirmation';

const MAX_REASON_LIMITS = 20;
const MAX_WINDOW_SECONDS = 7 * 24 * 3600;

export function hasGuardrails(guardrails: Guardrails): boolean {
  return guardrails.failureThreshold !== null || guardrails.reasonLimits.length > 0 || guardrails.confirmTimeoutSeconds !== null || guardrails.healthRegression !== null;
}

/** Checks a deployment's guardrails as a client sent them; every refusal is a 400 naming the field. */
export function validGuardrails(guardrails: Guardrails): Guardrails {
  const threshold = guardrails.failureThreshold;
  if (threshold) {
    if (!(threshold.percent > 0 && threshold.percent <= 100)) throw invalidArgument('failure_threshold.percent must be above 0 and at most 100');
    if (!Number.isInteger(threshold.minFinished) || threshold.minFinished < 1) throw invalidArgument('failure_threshold.min_finished must be an integer of at least 1');
  }
  if (guardrails.reasonLimits.length > MAX_REASON_LIMITS) throw invalidArgument(`reason_limits holds at most ${MAX_REASON_LIMITS} limits`);
  const reasons = new Set<string>();
  for (const [index, limit] of guardrails.reasonLimits.entries()) {
    const at = `reason_limits[${index}]`;
    if (!/^[a-z0-9_]{1,64}$/.test(limit.reason)) throw invalidArgument(`${at}.reason must be 1 to 64 lowercase letters, digits or underscores`);
    if (reasons.has(limit.reason)) throw invalidArgument(`${at}.reason "${limit.reason}" is limited twice`);
    reasons.add(limit.reason);
    if (!Number.isInteger(limit.count) || limit.count < 1) throw invalidArgument(`${at}.count must be an integer of at least 1`);
    if (!Number.isInteger(limit.windowSeconds) || limit.windowSeconds < 1 || limit.windowSeconds > MAX_WINDOW_SECONDS) {
      throw invalidArgument(`${at}.window_seconds must be an integer from 1 to ${MAX_WINDOW_SECONDS}`);
    }
  }
  const timeout = guardrails.confirmTimeoutSeconds;
  if (timeout !== null && (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_WINDOW_SECONDS)) {
    throw invalidArgument(`confirm_timeout_seconds must be an integer from 1 to ${MAX_WINDOW_SECONDS}`);
  }
  if (guardrails.healthRegression) validHealthRegression(guardrails.healthRegression);
  return guardrails;
}

/** What the guardrails are judged on, counted by the store at one moment. */
export interface GuardrailFigures {
  /** Devices whose current status is confirmed. */
  confirmed: number;
  /** Devices whose current status is failed or rolled_back. */
  failed: number;
  /** Devices counted as failed because they went silent (`no_confirmation`). */
  timedOut: number;
  /** Failures per limited reason within that limit's window. */
  recentFailuresByReason: Map<string, number>;
  /** Both sides' device health, when the deployment has the health guardrail. */
  health?: HealthComparison;
}

/**
 * Devices silent past the confirm timeout: those whose current status is a step in progress, less
 * those that reached a status within the timeout (`recentByStatus`, counted over the statuses
 * reached since then). Statuses only rise, so a device's newest status is its current one.
 */
export function silentDevices(byStatus: ReadonlyMap<string, number>, recentByStatus: ReadonlyMap<string, number>): number {
  return [...silentByStatus(byStatus, recentByStatus).values()].reduce((sum, devices) => sum + devices, 0);
}

/**
 * The silent devices per the step they went silent at. A device's newest status is its current one,
 * so a device that reached its current status within the timeout is counted under that status in
 * `recentByStatus` too, and the difference per status is the devices that went silent there.
 *
 * The two counts are read at slightly different moments, and a report stored between the two
 * reads puts its device at one step in one count and at the next step in the other: per status it
 * would look silent at the step it just left. So the number of silent devices is the difference
 * over all the steps in progress, and a step's share of it is trimmed from the earliest steps when
 * the per-step differences add up to more. A device caught mid-report is never counted silent (a
 * guardrail must not pause on it); a silent device may go uncounted for that one reading.
 */
export function silentByStatus(byStatus: ReadonlyMap<string, number>, recentByStatus: ReadonlyMap<string, number>): Map<string, number> {
  const steps = [...new Set([...byStatus.keys(), ...recentByStatus.keys()])].filter(isInProgress).sort((a, b) => rankOf(a) - rankOf(b));
  const quiet = steps.map((status) => (byStatus.get(status) ?? 0) - (recentByStatus.get(status) ?? 0));
  const total = Math.max(0, quiet.reduce((sum, devices) => sum + devices, 0));
  let excess = quiet.reduce((sum, devices) => sum + Math.max(0, devices), 0) - total;
  const silent = new Map<string, number>();
  steps.forEach((status, index) => {
    const trimmed = Math.min(excess, Math.max(0, quiet[index]!));
    excess -= trimmed;
    const devices = Math.max(0, quiet[index]!) - trimmed;
    if (devices > 0) silent.set(status, devices);
  });
  return silent;
}

/**
 * Devices per status as people read them: the silent ones moved from the step they stopped at to
 * `failed`, where every other count (failures, failures by reason, the guardrails) puts them.
 */
export function withSilentAsFailed(byStatus: ReadonlyMap<string, number>, silent: ReadonlyMap<string, number>): Map<string, number> {
  const counts = new Map(byStatus);
  for (const [status, devices] of silent) {
    counts.set(status, (counts.get(status) ?? 0) - devices);
    counts.set('failed', (counts.get('failed') ?? 0) + devices);
  }
  return counts;
}

/** Why a deployment paused itself: the guardrail and the figures it saw. */
export interface GuardrailTrip {
  guardrail: 'failure_threshold' | 'reason_limit' | 'health_regression';
  detail: string;
  figures: Record<string, number>;
}

/**
 * The first guardrail the figures trip, or null. A reason limit is checked first: it is the sharper
 * signal; the health of running devices last, as it needs the most hours to show.
 */
export function trippedGuardrail(guardrails: Guardrails, figures: GuardrailFigures): GuardrailTrip | null {
  for (const limit of guardrails.reasonLimits) {
    const failures = figures.recentFailuresByReason.get(limit.reason) ?? 0;
    if (failures >= limit.count) {
      return {
        guardrail: 'reason_limit',
        detail: `${failures} failures with reason ${limit.reason} within ${limit.windowSeconds} s (limit ${limit.count})`,
        figures: { failures, count: limit.count, window_seconds: limit.windowSeconds },
      };
    }
  }
  const threshold = guardrails.failureThreshold;
  if (threshold) {
    const failed = figures.failed + figures.timedOut;
    const finished = figures.confirmed + failed;
    if (finished >= threshold.minFinished && failed * 100 >= threshold.percent * finished) {
      const percent = Math.round((failed * 1000) / finished) / 10;
      return {
        guardrail: 'failure_threshold',
        detail: `${failed} of ${finished} finished devices failed (${percent}%, threshold ${threshold.percent}% from ${threshold.minFinished} finished)`,
        figures: { finished, failed, timed_out: figures.timedOut, confirmed: figures.confirmed },
      };
    }
  }
  if (guardrails.healthRegression && figures.health) return healthRegressionTrip(guardrails.healthRegression, figures.health);
  return null;
}

function healthRegressionTrip(guardrail: HealthRegressionGuardrail, health: HealthComparison): GuardrailTrip | null {
  const judgement = judgeHealth(guardrail, health);
  if (!judgement.regressed) return null;
  const { updated, previous } = health;
  const perThousand = (rate: number) => Math.round(rate * 1000 * 100) / 100;
  return {
    guardrail: 'health_regression',
    detail:
      `devices on the build reset abnormally ${perThousand(resetRate(updated))} times per 1000 device-hours (${updated.abnormalResets} in ${Math.round(updated.deviceSeconds / 3600)} h of ${updated.devices} devices), ` +
      `devices not yet updated ${perThousand(resetRate(previous))} (${previous.abnormalResets} in ${Math.round(previous.deviceSeconds / 3600)} h of ${previous.devices} devices): ` +
      `above the ${guardrail.marginPercent}% margin at p = ${judgement.pValue.toPrecision(2)} (significance ${guardrail.significance})`,
    figures: {
      updated_devices: updated.devices,
      updated_device_hours: Math.round(updated.deviceSeconds / 3600),
      updated_abnormal_resets: updated.abnormalResets,
      previous_devices: previous.devices,
      previous_device_hours: Math.round(previous.deviceSeconds / 3600),
      previous_abnormal_resets: previous.abnormalResets,
      margin_percent: guardrail.marginPercent,
    },
  };
}
