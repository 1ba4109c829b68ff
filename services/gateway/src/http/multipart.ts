import { invalidArgument } from '@ota/errors';
import Busboy from 'busboy';
import type { Context } from 'koa';
import type { Readable } from 'node:stream';

export interface UploadParts {
  manifest: string;
  /** The binary as it arrives; never buffered whole. */
  binary: AsyncIterable<Buffer>;
  /** Resolves with every text field once the whole form has been read. */
  complete: Promise<Map<string, string>>;
}

/**
 * Reads a multipart/form-data upload as a stream. The `manifest` field must come before the
 * `binary` file part (curl -F sends parts in the order given), so that the manifest is checked
 * before a single byte is stored; other fields may come anywhere. `handle` runs as soon as the
 * binary part starts, and its result is this function's result.
 */
export function receiveUpload<T>(ctx: Context, manifestLimitBytes: number, handle: (parts: UploadParts) => Promise<T>): Promise<T> {
  if (!ctx.is('multipart/form-data')) throw invalidArgument('send multipart/form-data with a manifest field and a binary file');
  return new Promise<T>((resolve, reject) => {
    const fields = new Map<string, string>();
    let binarySeen = false;
    let settle: { resolve: (fields: Map<string, string>) => void; reject: (error: Error) => void } | undefined;
    const complete = new Promise<Map<string, string>>((resolveComplete, rejectComplete) => {
      settle = { resolve: resolveComplete, reject: rejectComplete };
    });
    complete.catch(() => undefined);

    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({ headers: ctx.req.headers, limits: { fieldSize: manifestLimitBytes, files: 1, fields: 20, parts: 25 } });
    } catch (error) {
      reject(invalidArgument(`malformed multipart body: ${(error as Error).message}`));
      return;
    }
    const fail = (error: Error) => {
      settle?.reject(error);
      reject(error);
      ctx.req.unpipe(parser);
      ctx.req.resume();
    };

    parser.on('field', (name: string | undefined, value, info) => {
      // busboy gives no name for a part whose name it cannot decode.
      if (typeof name !== 'string') fail(invalidArgument('malformed multipart body: a form field has no readable name'));
      else if (info.valueTruncated) fail(invalidArgument(`form field ${name} is larger than ${manifestLimitBytes} bytes`));
      else fields.set(name, value);
    });
    parser.on('file', (name, stream: Readable) => {
      if (name !== 'binary') {
        stream.resume();
        return;
      }
      binarySeen = true;
      const manifest = fields.get('manifest');
      if (manifest === undefined) {
        stream.resume();
        fail(invalidArgument('manifest is required, and must come before the binary part'));
        return;
      }
      handle({ manifest, binary: stream, complete }).then(resolve, reject);
    });
    parser.on('filesLimit', () => fail(invalidArgument('send exactly one binary file')));
    parser.on('error', (error: Error) => fail(invalidArgument(`malformed multipart body: ${error.message}`)));
    parser.on('close', () => {
      if (!binarySeen) {
        fail(invalidArgument(fields.has('manifest') ? 'binary is required' : 'manifest and binary are required'));
        return;
      }
      settle?.resolve(fields);
    });
    ctx.req.on('aborted', () => fail(invalidArgument('the upload was aborted')));
    ctx.req.pipe(parser);
  });
}
