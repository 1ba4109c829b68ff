import type { Logger } from '@ota/logging';
import type { RolloutConfig } from './config';
import type { Rollout } from './domain/rollout';

/** A round run on a timer that never overlaps itself: a round still running when the next is due skips it. */
class Rounds {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly round: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  start(): this {
    this.timer = setInterval(() => {
      this.running ??= this.round().finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
    return this;
  }

  /** No further rounds; resolves when the one under way has ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

/**
 * What each rollout replica does by itself, on timers: judging guardrails and ramping staged plans
 * (the store lets one replica make each change), writing the deployment count changes of the
 * reports it stored, and compacting and recounting those counts.
 */
export function startSupervision(rollout: Rollout, config: Pick<RolloutConfig, 'SUPERVISE_INTERVAL_MS' | 'STATUS_COUNTS_FLUSH_MS' | 'STATUS_COUNTS_COMPACT_INTERVAL_MS'>, logger: Logger) {
  const warn = (message: string) => (error: unknown) => logger.warn({ err: error }, message);
  const supervise = new Rounds(() => rollout.deployments.superviseActive().catch(warn('supervising active deployments failed; the next round tries again')), config.SUPERVISE_INTERVAL_MS).start();
  const flush = new Rounds(() => rollout.counts.flush().catch(warn('writing deployment count changes failed; the next flush tries again')), config.STATUS_COUNTS_FLUSH_MS).start();
  const maintain = new Rounds(() => rollout.counts.maintain(), config.STATUS_COUNTS_COMPACT_INTERVAL_MS).start();
  return {
    /** Stops judging and ramping: first on shutdown, while the store and NATS are still there. */
    stopSupervising: () => supervise.stop(),
    /** Writes the count changes of the last reports: once no more reports come in, before the store goes. */
    async stopCounting(): Promise<void> {
      await Promise.all([flush.stop(), maintain.stop()]);
      await rollout.counts.flush().catch(warn('writing the last deployment count changes failed; the next recount corrects them'));
    },
  };
}
