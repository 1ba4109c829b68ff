import { setTimeout as sleep } from 'node:timers/promises';

/** Retries `attempt` with a growing pause until it succeeds or `limitMs` has passed. */
export async function retryUntil(attempt: () => Promise<void>, limitMs: number, onRetry: (error: unknown) => void): Promise<void> {
  const giveUpAt = Date.now() + limitMs;
  for (let pauseMs = 200; ; pauseMs = Math.min(pauseMs * 2, 5_000)) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() + pauseMs > giveUpAt) throw error;
      onRetry(error);
      await sleep(pauseMs);
    }
  }
}
