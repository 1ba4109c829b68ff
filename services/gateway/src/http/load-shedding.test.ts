import { ConcurrencyLimiter, jitteredSeconds } from './load-shedding';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ConcurrencyLimiter', () => {
  it('admits up to its limit, queues the next ones in order, and refuses past the queue', async () => {
    const limiter = new ConcurrencyLimiter({ maxConcurrent: 2, maxQueued: 2, maxWaitMs: 10_000 });
    expect(await limiter.acquire()).toBe(true);
    expect(await limiter.acquire()).toBe(true);
    const admitted: number[] = [];
    const third = limiter.acquire().then((ok) => ok && admitted.push(3));
    const fourth = limiter.acquire().then((ok) => ok && admitted.push(4));
    expect(await limiter.acquire()).toBe(false);
    expect([limiter.inUse, limiter.queued]).toEqual([2, 2]);
    limiter.release();
    await tick();
    expect(admitted).toEqual([3]);
    limiter.release();
    await Promise.all([third, fourth]);
    expect(admitted).toEqual([3, 4]);
    limiter.release();
    limiter.release();
    expect([limiter.inUse, limiter.queued]).toEqual([0, 0]);
  });

  it('refuses a request whose wait runs out, and keeps the count right afterwards', async () => {
    jest.useFakeTimers();
    try {
      const limiter = new ConcurrencyLimiter({ maxConcurrent: 1, maxQueued: 5, maxWaitMs: 100 });
      expect(await limiter.acquire()).toBe(true);
      const waiting = limiter.acquire();
      jest.advanceTimersByTime(100);
      expect(await waiting).toBe(false);
      expect(limiter.queued).toBe(0);
      limiter.release();
      expect(limiter.inUse).toBe(0);
      expect(await limiter.acquire()).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('refuses at once when waiting is switched off', async () => {
    const limiter = new ConcurrencyLimiter({ maxConcurrent: 1, maxQueued: 5, maxWaitMs: 0 });
    expect(await limiter.acquire()).toBe(true);
    expect(await limiter.acquire()).toBe(false);
  });
});

describe('jitteredSeconds', () => {
  it('spreads evenly over half to one and a half times the base, never below one second', () => {
    expect(jitteredSeconds(30, () => 0)).toBe(15);
    expect(jitteredSeconds(30, () => 0.999)).toBe(45);
    expect(jitteredSeconds(1, () => 0)).toBe(1);
    const drawn = new Set(Array.from({ length: 200 }, () => jitteredSeconds(30)));
    expect(drawn.size).toBeGreaterThan(10);
  });
});

describe('shedLoad on a real Koa server', () => {
  it('serves up to the limit, lets a few wait, and answers the rest 503 with a jittered Retry-After', async () => {
    const Koa = (await import('koa')).default;
    const { errorMiddleware } = await import('./errors');
    const { shedLoad: shed } = await import('./load-shedding');
    const { createLogger } = await import('@ota/logging');
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let shedCount = 0;
    const app = new Koa();
    const logger = createLogger('test');
    logger.level = 'silent';
    app.use(errorMiddleware(logger));
    app.use(shed(new ConcurrencyLimiter({ maxConcurrent: 2, maxQueued: 1, maxWaitMs: 60_000 }), 30, () => (shedCount += 1)));
    app.use(async (ctx) => {
      await gate;
      ctx.body = { ok: true };
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    try {
      const arrived: Response[] = [];
      const answers = Array.from({ length: 6 }, () => fetch(url).then((answer) => (arrived.push(answer), answer)));
      // Two are served and one waits behind the closed gate; the other three are refused at once.
      while (arrived.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
      for (const answer of arrived) {
        expect(answer.status).toBe(503);
        const seconds = Number(answer.headers.get('retry-after'));
        expect(seconds).toBeGreaterThanOrEqual(15);
        expect(seconds).toBeLessThan(46);
        expect((await answer.json()).detail).toMatch(/busy/);
      }
      expect(shedCount).toBe(3);
      open();
      const statuses = (await Promise.all(answers)).map((answer) => answer.status).sort();
      expect(statuses).toEqual([200, 200, 200, 503, 503, 503]);
    } finally {
      server.close();
    }
  });
});
