import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the proxy does to the first download that passes through it, once its body reaches byte
 * `atByte` of the build. Before any fault that ends the connection it waits a moment, so that the
 * bytes already sent reach the device: what the device then fetches again is its own doing.
 */
export type DownloadFault =
  | { kind: 'cut' | 'truncate' | 'stall' | 'expire' | 'kill'; atByte: number }
  | { kind: 'tamper'; atByte: number }
  /** A cut at `atByte`; then every resumed 206 comes chunked, its ETag sent again as a trailer. */
  | { kind: 'trailers'; atByte: number }
  /**
   * A cut at `atByte`, then a server outage of `durationMs`: every device request (check, report,
   * ask, download) is answered 503 with `Retry-After: OUTAGE_RETRY_AFTER_S` until it ends.
   */
  | { kind: 'outage'; atByte: number; durationMs: number }
  /** At `atByte` the body waits for `onStop` (a pause, a cancel or an archive made through the API), then goes on. */
  | { kind: 'stop'; atByte: number };

/** What a throttled proxy writes at a time. */
const THROTTLE_PIECE = 4096;

/** The `Retry-After` of an outage's 503s. */
export const OUTAGE_RETRY_AFTER_S = 2;

export interface ProxiedDownload {
  rangeStart: number;
  status: number;
  /** The size of the whole object (a build, or a delta patch): Content-Range's, or a 200's Content-Length; -1 when neither says. */
  total: number;
  bytesSent: number;
  /** `bytesSent` when `mark()` was called; 0 for a download that began after it. */
  bytesAtMark: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Drops the response's connection at once (the device sees a reset, not an end). */
function cut(response: http.ServerResponse): void {
  response.socket?.destroy();
}

/**
 * A local HTTP proxy in front of the gateway that injects the faults a device meets on a bad link:
 * a connection cut at a byte, a stall, a body cut short, a URL that expires mid-download, a flipped
 * byte, a 503 with Retry-After, an offer whose signature was changed, a resumed download answered
 * chunked with HTTP trailers, and a hook to kill the device itself mid-download. It listens on 127.0.0.1 and forwards to one loopback gateway.
 */
export class FaultProxy {
  readonly downloads: ProxiedDownload[] = [];
  /** Checks to answer 503 with `Retry-After: 1` before forwarding any. */
  checkFailures = 0;
  /** Applied to the first download only. */
  fault?: DownloadFault;
  /** How long `stall` and `expire` hold the connection silent before cutting it. */
  stallMs = 3_000;
  /** Called by a `kill` fault with the bytes of the build sent before it. */
  onKill?: (sentUpTo: number) => Promise<void>;
  /** Called by a `stop` fault, mid-body; the body goes on once it resolves. */
  onStop?: () => Promise<void>;
  /** Called with the event of each status report before it is forwarded; it goes on once this resolves. */
  onStatus?: (event: string) => Promise<void>;
  /** Changes the signature of every offer. */
  corruptSignature = false;
  /** Sends download bodies at this rate, in pieces of THROTTLE_PIECE bytes (a slow link); 0: as fast as they come. */
  throttleBytesPerSecond = 0;
  private server?: http.Server;
  private faultUsed = false;
  /** Until when device requests are answered 503 (an `outage` fault after its cut); 0: no outage. */
  private outageUntil = 0;
  /** The 503s an outage answered. */
  outageAnswers = 0;

  constructor(private readonly target: string) {}

  async listen(): Promise<string> {
    this.server = http.createServer((request, response) => {
      this.forward(request, response).catch(() => cut(response));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Marks this instant (a stop, say): `bytesSinceMark` counts what the downloads sent after it. */
  mark(): void {
    for (const download of this.downloads) download.bytesAtMark = download.bytesSent;
  }

  /** Bytes of the build sent after `mark()`. */
  bytesSinceMark(): number {
    return this.downloads.reduce((sum, download) => sum + download.bytesSent - download.bytesAtMark, 0);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async forward(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = request.url ?? '/';
    if (path.startsWith('/api/v1/ota/') && Date.now() < this.outageUntil) {
      this.outageAnswers += 1;
      response.writeHead(503, { 'content-type': 'application/json', 'retry-after': String(OUTAGE_RETRY_AFTER_S) }).end('{"detail":"injected: outage"}');
      return;
    }
    if (path.startsWith('/api/v1/ota/check/') && this.checkFailures > 0) {
      this.checkFailures -= 1;
      response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"detail":"injected: busy"}');
      return;
    }
    if (path.startsWith('/api/v1/ota/status/') && this.onStatus) {
      await this.onStatus(String((JSON.parse(Buffer.concat(chunks).toString() || '{}') as { event?: unknown }).event));
    }
    const upstream = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const target = new URL(path, this.target);
      // The Host header stays the proxy's, so that the gateway signs download URLs that come back here.
      const outgoing = http.request(target, { method: request.method, headers: request.headers }, resolve);
      outgoing.once('error', reject);
      outgoing.end(Buffer.concat(chunks));
    });
    if (path.startsWith('/api/v1/ota/download/')) return this.download(request, upstream, response);
    const body: Buffer[] = [];
    for await (const chunk of upstream) body.push(chunk as Buffer);
    let text = Buffer.concat(body);
    if (path.startsWith('/api/v1/ota/check/') && this.corruptSignature) {
      const offer = JSON.parse(text.toString()) as { signature?: string };
      if (offer.signature) {
        const bytes = Buffer.from(offer.signature, 'base64');
        bytes[10] = (bytes[10] ?? 0) ^ 0x01;
        offer.signature = bytes.toString('base64');
        text = Buffer.from(JSON.stringify(offer));
      }
    }
    const headers = { ...upstream.headers, 'content-length': String(text.length) };
    delete headers['transfer-encoding'];
    response.writeHead(upstream.statusCode ?? 502, headers).end(text);
  }

  private async download(request: http.IncomingMessage, upstream: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const range = /^bytes=(\d+)-/.exec(String(request.headers.range ?? ''));
    const total = Number(/\/(\d+)$/.exec(String(upstream.headers['content-range'] ?? ''))?.[1] ?? (upstream.statusCode === 200 ? (upstream.headers['content-length'] ?? -1) : -1));
    const record: ProxiedDownload = { rangeStart: upstream.statusCode === 206 && range ? Number(range[1]) : 0, status: upstream.statusCode ?? 0, total, bytesSent: 0, bytesAtMark: 0 };
    this.downloads.push(record);
    if (this.fault?.kind === 'trailers' && this.faultUsed && upstream.statusCode === 206) return this.withTrailers(upstream, response, record);
    response.writeHead(upstream.statusCode ?? 502, upstream.headers);
    const fault = upstream.statusCode !== undefined && upstream.statusCode < 300 && !this.faultUsed ? this.fault : undefined;
    if (fault) this.faultUsed = true;
    for await (const piece of upstream) {
      let chunk = piece as Buffer;
      const position = record.rangeStart + record.bytesSent;
      if (fault && fault.atByte >= position && fault.atByte < position + chunk.length) {
        const before = fault.atByte - position;
        if (fault.kind === 'tamper') {
          chunk = Buffer.from(chunk);
          chunk[before] = (chunk[before] ?? 0) ^ 0xff;
        } else if (fault.kind === 'stop') {
          await this.send(response, record, chunk.subarray(0, before));
          await this.onStop?.();
          chunk = chunk.subarray(before);
        } else {
          await this.send(response, record, chunk.subarray(0, before));
          upstream.destroy();
          if (fault.kind === 'outage') this.outageUntil = Date.now() + fault.durationMs;
          await this.interrupt(fault.kind === 'trailers' || fault.kind === 'outage' ? 'cut' : fault.kind, response, fault.atByte);
          return;
        }
      }
      await this.send(response, record, chunk);
    }
    response.end();
  }

  /**
   * The body chunked (no Content-Length), with `Trailer: ETag` and the ETag again after the last
   * chunk: a client receives header lines after the head it was asked for was complete.
   */
  private async withTrailers(upstream: http.IncomingMessage, response: http.ServerResponse, record: ProxiedDownload): Promise<void> {
    const headers = { ...upstream.headers, trailer: 'ETag' };
    delete headers['content-length'];
    response.writeHead(206, headers);
    for await (const piece of upstream) await this.send(response, record, piece as Buffer);
    response.addTrailers({ ETag: String(upstream.headers.etag ?? '"trailer"') });
    response.end();
  }

  private async send(response: http.ServerResponse, record: ProxiedDownload, chunk: Buffer): Promise<void> {
    const piece = this.throttleBytesPerSecond > 0 ? THROTTLE_PIECE : chunk.length;
    for (let at = 0; at < chunk.length; at += piece) {
      const part = chunk.subarray(at, at + piece);
      // The device hung up: nothing more reaches it, or counts.
      if (response.destroyed) return;
      record.bytesSent += part.length;
      if (!response.write(part)) await new Promise((resolve) => response.once('drain', resolve));
      if (this.throttleBytesPerSecond > 0) await sleep((part.length * 1000) / this.throttleBytesPerSecond);
    }
  }

  private async interrupt(kind: Exclude<DownloadFault['kind'], 'tamper' | 'trailers' | 'outage' | 'stop'>, response: http.ServerResponse, atByte: number): Promise<void> {
    // The bytes sent so far reach the device before the fault.
    await sleep(300);
    if (kind === 'truncate') {
      // A clean end of the connection before Content-Length was reached: a body cut short.
      response.socket?.end();
      return;
    }
    if (kind === 'stall' || kind === 'expire') await sleep(this.stallMs);
    if (kind === 'kill') await this.onKill?.(atByte);
    cut(response);
  }
}
