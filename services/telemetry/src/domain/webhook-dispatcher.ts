import type { Webhooks } from './webhooks';

/**
 * Runs delivery attempts: up to `concurrency` workers, each attempting due deliveries until none is
 * left. Woken at once when an event is enqueued. Every `intervalMs`, for retries that fell due, one
 * worker looks, and wakes the others when it finds one: an idle replica makes one store query per
 * interval, not one per worker.
 */
export class WebhookDispatcher {
  private running = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly webhooks: Webhooks,
    private readonly concurrency: number,
    private readonly warn: (error: unknown, message: string) => void,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => this.wake(1), intervalMs);
    this.timer.unref();
    this.wake(1);
  }

  /** Starts workers until `workers` of them run (all, by default), never more than the concurrency. */
  wake(workers = this.concurrency): void {
    while (!this.stopped && this.running < Math.min(workers, this.concurrency)) {
      this.running += 1;
      void this.work().finally(() => {
        this.running -= 1;
        if (this.running === 0) for (const resolve of this.idle) resolve();
      });
    }
  }

  /** Stops waking workers and waits for the attempts under way (their outcome is stored). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.running > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
  }

  private async work(): Promise<void> {
    try {
      while (!this.stopped && (await this.webhooks.attemptDue(() => this.wake())));
    } catch (error) {
      this.warn(error, 'webhook delivery failed to run; the next wake-up tries again');
    }
  }
}
