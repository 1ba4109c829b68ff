import { parseTrustedProxies } from './trusted-proxies';

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
