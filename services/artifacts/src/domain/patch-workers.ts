import type { Patches } from './patches';

export interface PatchWorkerSettings {
  /** Jobs made at once by this process (PATCH_WORKERS); each holds two builds in memory. */
  workers: number;
  /** How long an idle worker waits before it looks for a job again (PATCH_POLL_MS). */
  pollMs: number;
  onError: (error: unknown) => void;
}

/**
 * Runs the patch workers until the returned stop is called: each takes a job, makes it, and looks
 * again at once, or after `pollMs` when none waits. A stop lets the jobs in hand finish.
 */
export function startPatchWorkers(patches: Patches, settings: PatchWorkerSettings): () => Promise<void> {
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
      const worked = await patches.buildNext().catch((error: unknown) => {
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
