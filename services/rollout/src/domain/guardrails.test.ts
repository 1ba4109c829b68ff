import { isDomainError } from '@ota/errors';
import { NO_GUARDRAILS, silentByStatus, silentDevices, trippedGuardrail, withSilentAsFailed, validGuardrails, type GuardrailFigures, type Guardrails } from './guardrails';

const figures = (overrides: Partial<GuardrailFigures> = {}): GuardrailFigures => ({
  confirmed: 0,
  failed: 0,
  timedOut: 0,
  recentFailuresByReason: new Map(),
  ...overrides,
});
const threshold = (percent: number, minFinished: number): Guardrails => ({ ...NO_GUARDRAILS, failureThreshold: { percent, minFinished } });

test('the failure threshold waits for min_finished devices, then trips at or above the percentage', () => {
  const guardrails = threshold(20, 10);
  // 5 of 5 failed, but fewer than 10 finished: too early to judge.
  expect(trippedGuardrail(guardrails, figures({ failed: 5 }))).toBeNull();
  // 1 of 10 (10%) is below 20%.
  expect(trippedGuardrail(guardrails, figures({ confirmed: 9, failed: 1 }))).toBeNull();
  // 2 of 10 is exactly 20%: at the threshold trips.
  const trip = trippedGuardrail(guardrails, figures({ confirmed: 8, failed: 2 }));
  expect(trip).toMatchObject({ guardrail: 'failure_threshold', figures: { finished: 10, failed: 2, timed_out: 0, confirmed: 8 } });
  expect(trip!.detail).toBe('2 of 10 finished devices failed (20%, threshold 20% from 10 finished)');
});

test('devices that went silent count as finished and failed', () => {
  const trip = trippedGuardrail(threshold(30, 4), figures({ confirmed: 3, timedOut: 2 }));
  expect(trip).toMatchObject({ guardrail: 'failure_threshold', figures: { finished: 5, failed: 2, timed_out: 2 } });
  expect(trippedGuardrail(threshold(50, 4), figures({ confirmed: 3, timedOut: 2 }))).toBeNull();
});

test('a reason limit trips on the count within its window, before the threshold is looked at', () => {
  const guardrails: Guardrails = {
    ...threshold(50, 2),
    reasonLimits: [{ reason: 'signature_invalid', count: 3, windowSeconds: 600 }],
  };
  expect(trippedGuardrail(guardrails, figures({ confirmed: 10, recentFailuresByReason: new Map([['signature_invalid', 2]]) }))).toBeNull();
  const trip = trippedGuardrail(guardrails, figures({ failed: 3, recentFailuresByReason: new Map([['signature_invalid', 3]]) }));
  expect(trip).toMatchObject({ guardrail: 'reason_limit', figures: { failures: 3, count: 3, window_seconds: 600 } });
  expect(trip!.detail).toBe('3 failures with reason signature_invalid within 600 s (limit 3)');
});

test('no guardrails never trip', () => {
  expect(trippedGuardrail(NO_GUARDRAILS, figures({ failed: 1000, timedOut: 50 }))).toBeNull();
});

test('invalid guardrails are refused with the field named', () => {
  const refusal = (guardrails: Guardrails) => {
    try {
      validGuardrails(guardrails);
      return 'accepted';
    } catch (error) {
      if (isDomainError(error, 'InvalidArgument')) return error.message;
      throw error;
    }
  };
  expect(refusal(threshold(0, 5))).toMatch(/^failure_threshold.percent/);
  expect(refusal(threshold(10, 0))).toMatch(/^failure_threshold.min_finished/);
  const limit = { reason: 'flash_error', count: 2, windowSeconds: 60 };
  expect(refusal({ ...NO_GUARDRAILS, reasonLimits: [limit, limit] })).toBe('reason_limits[1].reason "flash_error" is limited twice');
  expect(refusal({ ...NO_GUARDRAILS, reasonLimits: [{ ...limit, windowSeconds: 0 }] })).toMatch(/^reason_limits\[0\].window_seconds/);
  expect(refusal({ ...NO_GUARDRAILS, confirmTimeoutSeconds: 0 })).toMatch(/^confirm_timeout_seconds/);
  expect(refusal({ ...threshold(12.5, 3), reasonLimits: [limit], confirmTimeoutSeconds: 3600 })).toBe('accepted');
});

test('silent devices are those in progress that reached no status within the timeout', () => {
  // 2 downloading and 1 flashed now; of them, 1 reached its status recently. Offered and finished devices never count.
  const byStatus = new Map([['offered', 5], ['downloaded', 2], ['flashed', 1], ['confirmed', 4], ['failed', 1]]);
  const recent = new Map([['flashed', 1], ['confirmed', 2]]);
  expect(silentDevices(byStatus, recent)).toBe(2);
  expect(silentDevices(byStatus, new Map())).toBe(3);
  expect(silentDevices(new Map([['offered', 3]]), new Map())).toBe(0);
});

test('a device whose report lands between the two counts is not silent, at the step it left or the one it reached', () => {
  // One device truly silent at downloaded. Another moved from downloaded to flashed: the counts of
  // current statuses were read before its report was stored, the recent statuses after it.
  const countsFirst = silentByStatus(new Map([['downloaded', 2], ['confirmed', 1]]), new Map([['flashed', 1], ['confirmed', 1]]));
  expect(Object.fromEntries(countsFirst)).toEqual({ downloaded: 1 });
  // The other way round: the counts already hold its new status, the recent statuses do not.
  const recentFirst = silentByStatus(new Map([['downloaded', 1], ['flashed', 1]]), new Map([['downloaded', 1]]));
  expect(silentDevices(new Map([['downloaded', 1], ['flashed', 1]]), new Map([['downloaded', 1]]))).toBe(1);
  expect([...recentFirst.values()].reduce((sum, devices) => sum + devices, 0)).toBe(1);
  // The race alone never makes a device silent.
  expect(silentDevices(new Map([['download_started', 1]]), new Map([['downloaded', 1]]))).toBe(0);
  expect(silentDevices(new Map([['downloaded', 1]]), new Map([['download_started', 1]]))).toBe(0);
});

test('silent devices move from the step they stopped at to failed, and the total stays the same', () => {
  const byStatus = new Map([['pending', 3], ['downloaded', 2], ['reboot', 4], ['confirmed', 4], ['failed', 1]]);
  const recent = new Map([['reboot', 1], ['confirmed', 2]]);
  const silent = silentByStatus(byStatus, recent);
  expect(Object.fromEntries(silent)).toEqual({ downloaded: 2, reboot: 3 });
  const shown = withSilentAsFailed(byStatus, silent);
  expect(Object.fromEntries(shown)).toEqual({ pending: 3, downloaded: 0, reboot: 1, confirmed: 4, failed: 6 });
  const total = (counts: Map<string, number>) => [...counts.values()].reduce((sum, count) => sum + count, 0);
  expect(total(shown)).toBe(total(byStatus));
});
