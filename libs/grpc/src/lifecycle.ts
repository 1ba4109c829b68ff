import { createLogger, type Logger } from '@ota/logging';
import { ServiceMetrics } from '@ota/metrics';

export type Stopper = () => Promise<void> | void;

/**
 * Runs a process until SIGTERM or SIGINT, then calls the stoppers in the reverse order of start:
 * stop taking work first, finish what is in flight, drain NATS, close stores. A second signal, or
 * `forceAfterMs` without finishing, exits at once.
 */
export async function runUntilSignalled(logger: Logger, start: () => Promise<Stopper[]>, forceAfterMs = 15_000): Promise<void> {
  let stoppers: Stopper[];
  try {
    stoppers = await start();
  } catch (error) {
    logger.fatal({ err: error }, 'start failed');
    process.exit(1);
  }
  logger.info('started');

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    const force = setTimeout(() => {
      logger.error('shutdown took too long: exiting');
      process.exit(1);
    }, forceAfterMs);
    force.unref();
    for (const stopper of [...stoppers].reverse()) {
      try {
        await stopper();
      } catch (error) {
        logger.error({ err: error }, 'error while stopping');
      }
    }
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** What every service process starts from: its name, configuration, logger and metrics. */
export interface ServiceProcess<Config> {
  name: string;
  config: Config;
  logger: Logger;
  metrics: ServiceMetrics;
}

/**
 * A service's main: loads its configuration, sets its log level, makes its metrics, then runs
 * `start` until signalled (runUntilSignalled). A configuration that does not load is a failed start.
 */
export function runService<Config extends { LOG_LEVEL: string; METRICS_EVENT_LOOP_RESOLUTION_MS: number }>(
  name: string,
  loadConfig: () => Config,
  start: (service: ServiceProcess<Config>) => Promise<Stopper[]>,
): Promise<void> {
  const logger = createLogger(name);
  return runUntilSignalled(logger, async () => {
    const config = loadConfig();
    logger.level = config.LOG_LEVEL;
    return start({ name, config, logger, metrics: new ServiceMetrics(name, config.METRICS_EVENT_LOOP_RESOLUTION_MS) });
  });
}
