import type { Webhooks } from './webhooks';

/** Past its due time a look is this much late at most, so that a timer firing a hair early is no miss. */
const DUE_SLACK_MS = 5;
/** The soonest a look follows one that found nothing due though a delivery was past due (a lapsing claim's). */
const PAST_DUE_GAP_MS = 1_000;

/**
 * Runs delivery attempts: up to `concurrency` workers, each attempting due deliveries until none is
 * left. Woken at once when an event is enqueued. When the last worker stops, the dispatcher asks
 * the store when the first pending delivery falls due (any replica's: a retry, or a claim that
 * lapses when its holder died) and looks again then, with one worker, which wakes the others when
 * it finds one; it looks at least every `longestGapMs`, for what other replicas scheduled after
 * that question. An idle replica makes two store queries per `longestGapMs`, not one per worker
 * per second.
 */
export class WebhookDispatcher {
  private running = 0;
  private stopped = false;
  private longestGapMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly webhooks: Webhooks,
    private readonly concurrency: number,
    private readonly warn: (error: unknown, message: string) => void,
  ) {}

  start(longestGapMs: number): void {
    this.longestGapMs = longestGapMs;
    this.wake(1);
  }

  /** Starts workers until `workers` of them run (all, by default), never more than the concurrency. */
  wake(workers = this.concurrency): void {
    while (!this.stopped && this.running < Math.min(workers, this.concurrency)) {
      this.running += 1;
      void this.work().finally(() => {
        this.running -= 1;
        if (this.running > 0) return;
        for (const resolve of this.idle) resolve();
        void this.lookAgainWhenDue();
      });
    }
  }

  /** Stops waking workers and waits for the attempts under way (their outcome is stored). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.running > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
  }

  private async work(): Promise<void> {
    try {
      while (!this.stopped && (await this.webhooks.attemptDue(() => this.wake())));
    } catch (error) {
      this.warn(error, 'webhook delivery failed to run; the next wake-up tries again');
    }
  }

  /** Sets the one timer of the next look: at the first pending delivery's due time, or after the longest gap. */
  private async lookAgainWhenDue(): Promise<void> {
    // Only a dispatcher that was started looks on its own (one woken by events alone does not).
    if (this.stopped || this.longestGapMs === 0) return;
    let gapMs = this.longestGapMs;
    try {
      const due = await this.webhooks.firstPendingAt();
      if (due) {
        const untilDue = due.getTime() - Date.now();
        gapMs = Math.min(gapMs, untilDue > 0 ? untilDue + DUE_SLACK_MS : PAST_DUE_GAP_MS);
      }
    } catch (error) {
      this.warn(error, 'could not read when the next webhook delivery is due; looking again after the longest gap');
    }
    // Woken meanwhile: those workers set the timer when they stop.
    if (this.stopped || this.running > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(1), gapMs);
    this.timer.unref();
  }
}
