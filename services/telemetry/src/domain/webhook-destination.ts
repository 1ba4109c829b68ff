import { BlockList, isIP } from 'node:net';

// Loopback, link-local, private and other non-public ranges (RFC 6890), IPv4 and IPv6.
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether an address is in a loopback, link-local, private or otherwise non-public range. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as IPv4.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? NON_PUBLIC.check(mapped[1]!, 'ipv4') : NON_PUBLIC.check(address, 'ipv6');
}

/** Why a webhook URL is refused, or null. Names are resolved when a delivery connects (see the sender). */
export function urlProblem(url: string, allowNonPublic: boolean): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'url must be an absolute http or https URL';
  if (parsed.username || parsed.password) return 'url must not carry credentials; receivers verify the signature instead';
  if (url.length > 2048) return 'url must be at most 2048 characters';
  if (allowNonPublic) return null;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && isNonPublicAddress(host))) {
    return 'url points to a loopback, link-local or private address; an operator may allow those with WEBHOOK_ALLOW_PRIVATE_DESTINATIONS';
  }
  return null;
}
