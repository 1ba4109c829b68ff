export interface WorkerSettings {
  /** Jobs done at once by this process (PATCH_WORKERS, CRASH_DECODE_WORKERS). */
  workers: number;
  /** How long an idle worker waits before it looks for a job again (PATCH_POLL_MS, CRASH_DECODE_POLL_MS). */
  pollMs: number;
  onError: (error: unknown) => void;
}

/**
 * Runs workers until the returned stop is called: each does one job (`next` answers whether there
 * was one) and looks again at once, or after `pollMs` when none waits. A stop lets the jobs in hand
 * finish. Patches and crash decodes are done this way, off every request's path.
 */
export function startWorkers(next: () => Promise<boolean>, settings: WorkerSettings): () => Promise<void> {
  let stopped = false;
  const sleeping = new Set<() => void>();
  const idle = () =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleeping.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, settings.pollMs);
      sleeping.add(wake);
    });
  const worker = async () => {
    while (!stopped) {
      const worked = await next().catch((error: unknown) => {
        settings.onError(error);
        return false;
      });
      if (!worked && !stopped) await idle();
    }
  };
  const running = Array.from({ length: settings.workers }, worker);
  return async () => {
    stopped = true;
    for (const wake of [...sleeping]) wake();
    await Promise.all(running);
  };
}
