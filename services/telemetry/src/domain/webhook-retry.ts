export interface RetrySettings {
  /** The wait after the first failed attempt; it doubles with each failure after. */
  baseDelayMs: number;
  /** The longest wait between two attempts. */
  maxDelayMs: number;
  /** How long after the event a delivery is still attempted; then it is given up. */
  windowMs: number;
}

/**
 * When the delivery is attempted next after `failedAttempts` failures, or null once that would be
 * past its window (exponential back-off: base, 2 × base, 4 × base, … up to the longest wait).
 */
export function nextAttemptAt(createdAt: Date, failedAttempts: number, now: Date, settings: RetrySettings): Date | null {
  const delay = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** Math.min(failedAttempts - 1, 40));
  const next = new Date(now.getTime() + delay);
  return next.getTime() - createdAt.getTime() > settings.windowMs ? null : next;
}
