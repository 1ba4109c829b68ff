import { unavailable } from '@ota/errors';
import type { Context, Next } from 'koa';

export interface ConcurrencyLimitSettings {
  /** Requests served at once; more wait in the queue. */
  maxConcurrent: number;
  /** Requests that may wait; beyond it a request is refused at once. */
  maxQueued: number;
  /** How long a request may wait for a place before it is refused. */
  maxWaitMs: number;
}

/**
 * Admits at most `maxConcurrent` requests at a time and lets a bounded number wait, each for a
 * bounded time; what finds no place is refused. The limit caps the concurrent work one gateway
 * replica sends to the services and stores, and the short wait keeps the latency of admitted
 * requests bounded while the rest of a surge is told to come back later.
 */
export class ConcurrencyLimiter {
  private active = 0;
  private readonly waiting: Array<{ admit: () => void }> = [];

  constructor(private readonly settings: ConcurrencyLimitSettings) {}

  /** Resolves true once the request holds a place, false when it must be refused. */
  acquire(): Promise<boolean> {
    if (this.active < this.settings.maxConcurrent && this.waiting.length === 0) {
      this.active += 1;
      return Promise.resolve(true);
    }
    if (this.waiting.length >= this.settings.maxQueued || this.settings.maxWaitMs === 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const entry = {
        admit: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(entry), 1);
        resolve(false);
      }, this.settings.maxWaitMs);
      this.waiting.push(entry);
    });
  }

  /** Gives the place to the longest-waiting request, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next.admit();
    else this.active -= 1;
  }

  get inUse(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }
}

/** A whole number of seconds drawn evenly from [base/2, base×1.5): clients that were told to wait together come back apart. */
export function jitteredSeconds(base: number, random: () => number = Math.random): number {
  return Math.max(1, Math.round(base * (0.5 + random())));
}

/**
 * Middleware for the device API: runs before the body is parsed and the token read, so that a
 * refused request costs almost nothing. Refusals are 503 with a jittered Retry-After.
 */
export function shedLoad(limiter: ConcurrencyLimiter, retryAfterSeconds: number, onShed: () => void) {
  return async (ctx: Context, next: Next) => {
    if (!(await limiter.acquire())) {
      onShed();
      const seconds = jitteredSeconds(retryAfterSeconds);
      throw unavailable(`the service is busy; retry in ${seconds} seconds`, seconds);
    }
    try {
      await next();
    } finally {
      limiter.release();
    }
  };
}
