import type { Context, Next } from 'koa';
import { HttpError } from './errors';

/**
 * What Node's HTTP parser lets through and HTTP/1.1 does not allow (RFC 9112): more than one Host
 * line (section 3.2 asks for 400), a major version other than 1 in the request line, and a
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
  const codings = request.headers['transfer-encoding'];
  if (codings !== undefined && codings.toLowerCase().split(',').some((coding) => coding.trim() !== 'chunked')) {
    throw new HttpError(400, `Transfer-Encoding "${codings}" is not accepted: send the body with Content-Length or chunked`);
  }
  await next();
}
