import { BlockList, isIP, type Socket } from 'node:net';
import type { Context, Next } from 'koa';

/** The headers through which a proxy tells the gateway what the client asked for. */
const FORWARDED_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port'];

/**
 * The proxies whose forwarded headers the gateway believes (TRUSTED_PROXIES): addresses and CIDR
 * ranges, IPv4 or IPv6, comma-separated. Throws on an entry that is neither, naming it.
 */
export function parseTrustedProxies(setting: string): BlockList {
  const list = new BlockList();
  for (const entry of setting.split(',').map((item) => item.trim()).filter(Boolean)) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits))) throw new Error(`TRUSTED_PROXIES: "${entry}" is not an address or a CIDR range`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

/** An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d; ranges are written as IPv4. */
function peerAddress(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, type: 'ipv4' };
  return { address, type: isIP(address) === 4 ? 'ipv4' : 'ipv6' };
}

/**
 * Drops the forwarded headers of a request that did not come from a trusted proxy, before anything
 * reads them: a client cannot choose the host of a download URL, its own address in the logs, or
 * the Secure flag of a cookie by sending `X-Forwarded-*` itself.
 */
export function forwardedHeadersOnlyFrom(trusted: BlockList) {
  // A connection's peer does not change, so it is judged once per connection: BlockList.check
  // makes a SocketAddress of the text each time, 0.9% of the gateway's CPU in a profiled s1 run
  // (docs/performance.md, "The floor, warmed"), and a device keeps its connection.
  const fromTrusted = new WeakMap<Socket, boolean>();
  const isTrusted = (socket: Socket): boolean => {
    let trustedPeer = fromTrusted.get(socket);
    if (trustedPeer === undefined) {
      const peer = peerAddress(socket.remoteAddress ?? '');
      trustedPeer = peer.address !== '' && trusted.check(peer.address, peer.type);
      fromTrusted.set(socket, trustedPeer);
    }
    return trustedPeer;
  };
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!isTrusted(ctx.req.socket)) {
      for (const header of FORWARDED_HEADERS) delete ctx.req.headers[header];
    }
    await next();
  };
}
