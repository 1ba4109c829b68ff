import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isNonPublicAddress } from '../domain/webhook-destination';
import type { WebhookSender } from '../domain/ports';

/**
 * POSTs with node:http(s). Unless non-public destinations are allowed, the address a name resolves
 * to is checked when the connection is made, so a name that later resolves to a private address
 * (DNS rebinding) is refused too. Redirects are not followed.
 */
export class HttpWebhookSender implements WebhookSender {
  constructor(private readonly allowNonPublic: boolean) {}

  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
    const target = new URL(url);
    // A literal address is connected to without a lookup.
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (!this.allowNonPublic && isIP(host) && isNonPublicAddress(host)) return Promise.reject(new Error(`${host} is a non-public address`));
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const call = request(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup: this.allowNonPublic ? undefined : publicOnlyLookup,
          timeout: timeoutMs,
        },
        (response) => {
          // Only the status matters; the body is read and dropped so the socket is freed.
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      call.on('timeout', () => call.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      call.on('error', reject);
      call.end(body);
    });
  }
}

const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const resolved = addresses as LookupAddress[];
    const refused = resolved.find((address) => isNonPublicAddress(address.address));
    if (refused) return callback(new Error(`${hostname} resolves to ${refused.address}, a non-public address`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, resolved);
    callback(null, resolved[0]!.address, resolved[0]!.family);
  });
};
