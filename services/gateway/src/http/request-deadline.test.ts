import Koa from 'koa';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, type Logger } from '@ota/logging';
import { isDomainError } from '@ota/errors';
import { requestDeadline } from './request-deadline';

/** A logger that keeps its warnings. */
function warningsInto(warned: Array<{ fields: Record<string, unknown>; message: string }>): Logger {
  const logger = createLogger('gateway', 'silent');
  logger.warn = ((fields: Record<string, unknown>, message: string) => void warned.push({ fields, message })) as Logger['warn'];
  return logger;
}

/** A Koa app behind the deadline whose one route takes `workMs`; answers the status and what was caught. */
async function serve(timeoutMs: number, workMs: number, warned: Array<{ fields: Record<string, unknown>; message: string }>) {
  const app = new Koa();
  let timedOut = 0;
  const caught: unknown[] = [];
  app.use(async (ctx, next) => {
    ctx.state.requestId = 'request-1';
    try {
      await next();
    } catch (error) {
      caught.push(error);
      ctx.status = 503;
    }
  });
  app.use(requestDeadline(timeoutMs, 2, warningsInto(warned), () => (timedOut += 1)));
  app.use(async (ctx) => {
    await sleep(workMs);
    ctx.body = { done: true };
  });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/projects/p1/`, { method: 'DELETE' });
    return { status: response.status, caught, timedOut: () => timedOut };
  } finally {
    server.close();
  }
}

describe('requestDeadline', () => {
  it('answers a request past its deadline as Unavailable, and says which request it was', async () => {
    const warned: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const { status, caught, timedOut } = await serve(50, 300, warned);
    expect(status).toBe(503);
    expect(isDomainError(caught[0], 'Unavailable')).toBe(true);
    expect(timedOut()).toBe(1);
    expect(warned).toEqual([{ fields: { requestId: 'request-1', method: 'DELETE', path: '/projects/p1/', ms: 50 }, message: 'request passed its deadline; answered 503' }]);
  });

  it('says nothing of a request answered in time', async () => {
    const warned: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const { status, timedOut } = await serve(1_000, 5, warned);
    expect(status).toBe(200);
    expect(timedOut()).toBe(0);
    expect(warned).toEqual([]);
  });
});
