import { TokenRateLimiter, type RateLimit, type RateLimitClass } from './rate-limit';

const limits = (developer: RateLimit): Record<RateLimitClass, RateLimit> => ({
  developer,
  device_token: { perSecond: 2, burst: 3 },
  fleet_token: { perSecond: 0, burst: 1 },
});

describe('TokenRateLimiter', () => {
  let clock = 0;
  const now = () => clock;
  let limiter: TokenRateLimiter;
  beforeEach(() => {
    clock = 1_000_000;
  });
  afterEach(() => limiter.close());

  test('allows the burst at once, then refuses with the whole seconds until the next request would be allowed', () => {
    limiter = new TokenRateLimiter(limits({ perSecond: 0.5, burst: 2 }), now);
    expect([limiter.take('t1', 'developer'), limiter.take('t1', 'developer')]).toEqual([0, 0]);
    expect(limiter.take('t1', 'developer')).toBe(2);
    clock += 1_000;
    expect(limiter.take('t1', 'developer')).toBe(1);
    clock += 1_000;
    expect(limiter.take('t1', 'developer')).toBe(0);
  });

  test('keeps a bucket per token and per kind', () => {
    limiter = new TokenRateLimiter(limits({ perSecond: 1, burst: 1 }), now);
    expect(limiter.take('t1', 'developer')).toBe(0);
    expect(limiter.take('t1', 'developer')).toBe(1);
    expect(limiter.take('t2', 'developer')).toBe(0);
    expect(limiter.take('t1', 'device_token')).toBe(0);
  });

  test('never limits a kind whose rate is 0, and keeps no bucket for it', () => {
    limiter = new TokenRateLimiter(limits({ perSecond: 1, burst: 1 }), now);
    for (let i = 0; i < 100; i += 1) expect(limiter.take('fleet', 'fleet_token')).toBe(0);
    expect(limiter.size).toBe(0);
  });

  test('forgets a bucket once it has refilled, and only then', () => {
    limiter = new TokenRateLimiter(limits({ perSecond: 1, burst: 10 }), now);
    limiter.take('t1', 'developer');
    limiter.take('t2', 'device_token');
    // After one request each, t2's bucket (2/s, burst 3) is full again after half a second, t1's (1/s, burst 10) after one.
    clock += 250;
    limiter.sweep();
    expect(limiter.size).toBe(2);
    clock += 250;
    limiter.sweep();
    expect(limiter.size).toBe(1);
    expect(limiter.take('t1', 'developer')).toBe(0);
    clock += 1_500;
    limiter.sweep();
    expect(limiter.size).toBe(0);
  });
});
