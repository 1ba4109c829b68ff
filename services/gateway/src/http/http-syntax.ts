import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Context, Next } from 'koa';
import { HttpError } from './errors';

/**
 * What Node's HTTP parser lets through and HTTP/1.1 does not allow (RFC 9112): more than one Host
 * line, or one that names no authority (section 3.2 asks for 400 for both), a major version other than 1 in the request line, and a
 * transfer coding other than `chunked`, which the gateway cannot decode. Each is a 400 with a
 * `detail` before anything else runs (RFC 9112 names 505 and 501 for the last two; bad input here is
 * always a 4xx, docs/api.md, "Conventions").
 */
export async function refuseMalformedHttp(ctx: Context, next: Next): Promise<void> {
  const request = ctx.req;
  if (request.httpVersionMajor !== 1) throw new HttpError(400, `HTTP/${request.httpVersion} in an HTTP/1.x request line: send HTTP/1.1`);
  let hosts = 0;
  for (let index = 0; index < request.rawHeaders.length; index += 2) if (request.rawHeaders[index]!.toLowerCase() === 'host') hosts += 1;
  if (hosts > 1) throw new HttpError(400, 'the request has more than one Host header');
  // The host (Host, or a trusted proxy's X-Forwarded-Host: untrusted ones are gone by now) shapes
  // offer URLs when PUBLIC_BASE_URL is empty: only an authority may, never a path, a user or a list.
  // Checked as sent: Koa would take the first of a list, and a URL parser the host after a user.
  const host = request.headers.host;
  if (host !== undefined && host !== '' && !isAuthority(host)) throw new HttpError(400, `Host "${host.slice(0, 100)}" is not a host name or address with an optional port`);
  const forwarded = request.headers['x-forwarded-host'];
  if (typeof forwarded === 'string' && !forwarded.split(',').every((entry) => isAuthority(entry.trim()))) {
    throw new HttpError(400, `X-Forwarded-Host "${forwarded.slice(0, 100)}" names something other than hosts with optional ports`);
  }
  const codings = request.headers['transfer-encoding'];
  // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing; the connection closes.
  if (codings !== undefined && request.httpVersion === '1.0') {
    throw new HttpError(400, 'Transfer-Encoding in an HTTP/1.0 request: its framing cannot be trusted; send HTTP/1.1, or Content-Length', { Connection: 'close' });
  }
  if (codings !== undefined && codings.toLowerCase().split(',').some((coding) => coding.trim() !== 'chunked')) {
    throw new HttpError(400, `Transfer-Encoding "${codings}" is not accepted: send the body with Content-Length or chunked`);
  }
  await next();
}

/** A host name (letters, digits, '-', '_' and dots between labels), an IPv4 address or a bracketed IPv6 one, and an optional port. */
const AUTHORITY = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

export function isAuthority(value: string): boolean {
  const match = value.length <= 260 ? AUTHORITY.exec(value) : null;
  if (!match) return false;
  if (value.startsWith('[') && !isIPv6(value.slice(1, value.indexOf(']')))) return false;
  return match[1] === undefined || Number(match[1]) <= 65_535;
}

function isIPv6(text: string): boolean {
  // Node's own parser decides: it knows every shortened and IPv4-suffixed form.
  return isIP(text) === 6;
}

/**
 * The answer to a request Node's parser could not read (a malformed request line, header or
 * chunk): a status with a `detail`, as every refusal has (docs/api.md, "Errors"), and the
 * connection closed, since where the next request would start is unknown.
 */
export function answerUnparsableRequest(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'the request did not arrive in time']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'the request line and headers are too large']
        : [400, 'Bad Request', `the request is not HTTP/1.1 that can be read: ${(error as { reason?: string }).reason ?? error.message}`];
  const body = JSON.stringify({ detail });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
