import type { Context } from 'koa';
import { HttpError } from './errors';

/** The request's body, whole, refused with 413 past `limit` bytes before more is read. */
export async function readBody(ctx: Context, limit: number, what: string, setting: string): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, `${what} is at most ${limit} bytes (${setting})`);
  if (Number(ctx.get('content-length') || 0) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const data of ctx.req as AsyncIterable<Buffer>) {
    size += data.length;
    if (size > limit) throw tooLarge();
    chunks.push(data);
  }
  return Buffer.concat(chunks);
}
