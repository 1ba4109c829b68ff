import type { Socket } from 'node:net';
import type { Context } from 'koa';
import { forwardedHeadersOnlyFrom, parseTrustedProxies } from './trusted-proxies';

describe('TRUSTED_PROXIES', () => {
  it('takes addresses and CIDR ranges of both families', () => {
    const trusted = parseTrustedProxies(' 10.0.0.0/8, 192.168.1.7 ,fd00::/8');
    expect(trusted.check('10.1.2.3', 'ipv4')).toBe(true);
    expect(trusted.check('192.168.1.7', 'ipv4')).toBe(true);
    expect(trusted.check('192.168.1.8', 'ipv4')).toBe(false);
    expect(trusted.check('fd12::1', 'ipv6')).toBe(true);
    expect(trusted.check('127.0.0.1', 'ipv4')).toBe(false);
  });

  it('trusts nobody when empty', () => {
    expect(parseTrustedProxies('').check('127.0.0.1', 'ipv4')).toBe(false);
  });

  it('names an entry that is not an address or a range', () => {
    expect(() => parseTrustedProxies('10.0.0.0/8,proxy.internal')).toThrow(/"proxy.internal"/);
    expect(() => parseTrustedProxies('10.0.0.0/x')).toThrow(/"10.0.0.0\/x"/);
  });
});

describe('forwarded headers', () => {
  const requestOn = (socket: Partial<Socket>) => ({ req: { socket, headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', host: 'ota' } } }) as unknown as Context;

  it('keeps them from a trusted proxy and drops them from anyone else, judging each connection once', async () => {
    const trusted = parseTrustedProxies('10.0.0.0/8');
    const check = jest.spyOn(trusted, 'check');
    const middleware = forwardedHeadersOnlyFrom(trusted);
    const proxy = { remoteAddress: '::ffff:10.1.2.3' };
    const client = { remoteAddress: '198.51.100.4' };
    const answers: Array<Record<string, string>> = [];
    for (const socket of [proxy, client, proxy, client]) {
      const ctx = requestOn(socket);
      await middleware(ctx, async () => undefined);
      answers.push(ctx.req.headers as Record<string, string>);
    }
    expect(answers.map((headers) => headers['x-forwarded-for'] ?? null)).toEqual(['203.0.113.9', null, '203.0.113.9', null]);
    expect(answers.every((headers) => headers.host === 'ota')).toBe(true);
    expect(check).toHaveBeenCalledTimes(2);
  });
});
