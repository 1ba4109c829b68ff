import type { Token } from '../auth/model';

export interface RateLimit {
  /** Tokens added per second; 0 switches the limit off. */
  perSecond: number;
  /** Bucket size: requests that may come at once above the rate. */
  burst: number;
}

/** The three kinds of caller that get their own limit (docs/operations.md, "Rate limits and request limits"). */
export type RateLimitClass = 'developer' | 'device_token' | 'fleet_token';

export function rateLimitClassOf(token: Token): RateLimitClass {
  if (token.kind === 'device') return 'device_token';
  if (token.kind === 'project' && token.scope === 'device') return 'fleet_token';
  return 'developer';
}

interface Bucket {
  limit: RateLimit;
  tokens: number;
  updatedAt: number;
}

/** The bucket's tokens at `now`: what it held plus what its rate has added since, up to the burst. */
function tokensAt(bucket: Bucket, now: number): number {
  return Math.min(bucket.limit.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * bucket.limit.perSecond);
}

/**
 * A token bucket per API token, in this gateway replica's memory. A bucket that has refilled
 * completely holds no information, so buckets are dropped once full, which bounds the map by the
 * tokens active within the last `burst / perSecond` seconds.
 */
export class TokenRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly limits: Record<RateLimitClass, RateLimit>,
    private readonly now: () => number = Date.now,
    sweepIntervalMs = 10_000,
  ) {
    this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.sweeper.unref();
  }

  /** Takes one request from the token's bucket: 0 if allowed, else the seconds until it would be. */
  take(tokenId: string, kind: RateLimitClass): number {
    const limit = this.limits[kind];
    if (limit.perSecond === 0) return 0;
    const key = `${kind}:${tokenId}`;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { limit, tokens: limit.burst, updatedAt: now };
    bucket.tokens = tokensAt(bucket, now);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / limit.perSecond));
  }

  get size(): number {
    return this.buckets.size;
  }

  sweep(): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) if (tokensAt(bucket, now) >= bucket.limit.burst) this.buckets.delete(key);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
