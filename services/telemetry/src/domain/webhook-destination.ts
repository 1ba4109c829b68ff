import { BlockList, isIP } from 'node:net';

// Every special-purpose range of the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (RFC 6890 and its updates), and the other non-public ones: a webhook may reach none of them
// unless the operator allows private destinations.
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // this network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.31.196.0', 24], // AS112
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // AS112 direct delegation
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 3], // multicast, reserved, limited broadcast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address. */
function ipv6Bytes(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return all.flatMap((group) => [group >> 8, group & 0xff]);
}

/** The IPv4 address an IPv6 form carries, when it is one that reaches IPv4 (mapped, compatible, NAT64, 6to4). */
function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  const zero = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  const quad = (at: number) => bytes.slice(at, at + 4).join('.');
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return quad(12); // ::ffff:a.b.c.d
  if (zero(0, 12)) return quad(12); // ::a.b.c.d
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12)) return quad(12); // 64:ff9b::a.b.c.d
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return quad(2); // 2002:aabb:ccdd::
  return undefined;
}

/**
 * Whether an address is one a webhook may not reach: any special-purpose range of IPv4 or IPv6,
 * and any IPv6 form that carries such an IPv4 address (IPv4-mapped and -compatible, NAT64, 6to4).
 */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return true;
  const ipv4 = embeddedIpv4(address);
  if (ipv4 !== undefined) return NON_PUBLIC.check(ipv4, 'ipv4');
  return NON_PUBLIC.check(address, 'ipv6');
}

/** Names that are never public, whatever a resolver says: localhost and the cloud metadata names. */
const NON_PUBLIC_NAMES = [/^localhost$/, /\.localhost$/, /^localhost\.localdomain$/, /^metadata\.google\.internal$/, /\.internal$/, /\.local$/];

export const PRIVATE_DESTINATION =
  'url points to a loopback, link-local, private or other special-purpose address; an operator may allow those with WEBHOOK_ALLOW_PRIVATE_DESTINATIONS';

/**
 * Why a webhook URL is refused by its form, or null. A name that passes is then resolved (at
 * creation and again at every delivery, so DNS rebinding is caught too) and refused when any
 * address it resolves to is non-public.
 */
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
  const host = hostOf(parsed);
  if (isIP(host) ? isNonPublicAddress(host) : NON_PUBLIC_NAMES.some((name) => name.test(host))) return PRIVATE_DESTINATION;
  return null;
}

/** The URL's host as a resolver takes it: brackets and a trailing dot removed, lowercase. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}
