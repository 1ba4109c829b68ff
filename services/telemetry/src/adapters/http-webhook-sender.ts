import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { hostOf, isNonPublicAddress, PRIVATE_DESTINATION } from '../domain/webhook-destination';
import type { WebhookSender } from '../domain/ports';

/** Resolves a name to every address it has (node:dns lookup, which reads /etc/hosts too). */
export type ResolveAll = (hostname: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/** What a tenant reads of a failed attempt: what went wrong, never an address our network resolved. */
const SAFE_ERRORS: Record<string, string> = {
  ENOTFOUND: "the destination's name does not resolve",
  EAI_AGAIN: "the destination's name could not be resolved just now",
  ECONNREFUSED: 'the receiver refused the connection',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the receiver cannot be reached',
  ENETUNREACH: 'the receiver cannot be reached',
  EPIPE: 'the connection was closed while sending',
};

class DeliveryError extends Error {}

function tenantSafe(error: unknown): Error {
  if (error instanceof DeliveryError) return error;
  const { code, message } = error as NodeJS.ErrnoException;
  if (code && SAFE_ERRORS[code]) return new DeliveryError(SAFE_ERRORS[code]);
  if (code && /CERT|TLS|SSL/.test(code)) return new DeliveryError(`the receiver's TLS certificate was refused (${code})`);
  return new DeliveryError(code ? `the request failed (${code})` : /^no answer within/.test(message) ? message : 'the request failed');
}

/**
 * POSTs with node:http(s). Unless non-public destinations are allowed, the address a name resolves
 * to is checked when the connection is made, so a name that later resolves to a private address
 * (DNS rebinding) is refused too. Redirects are not followed. Errors name no resolved address.
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly publicOnlyLookup: LookupFunction;

  constructor(
    private readonly allowNonPublic: boolean,
    private readonly resolveAll: ResolveAll = dnsLookup as unknown as ResolveAll,
  ) {
    this.publicOnlyLookup = (hostname, options, callback) => {
      this.resolveAll(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, '', 0);
        if (addresses.some((address) => isNonPublicAddress(address.address))) return callback(new DeliveryError(PRIVATE_DESTINATION), '', 0);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    };
  }

  async destinationProblem(url: string): Promise<string | null> {
    if (this.allowNonPublic) return null;
    const host = hostOf(new URL(url));
    if (isIP(host)) return null;
    const addresses = await new Promise<LookupAddress[] | undefined>((resolve) =>
      this.resolveAll(host, { all: true }, (error, found) => resolve(error ? undefined : found)),
    );
    // A name that does not resolve yet is accepted: its deliveries are checked when they connect.
    return addresses?.some((address) => isNonPublicAddress(address.address)) ? PRIVATE_DESTINATION : null;
  }

  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
    const target = new URL(url);
    // A literal address is connected to without a lookup.
    const host = hostOf(target);
    if (!this.allowNonPublic && isIP(host) && isNonPublicAddress(host)) return Promise.reject(new DeliveryError(PRIVATE_DESTINATION));
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<number>((resolve, reject) => {
      const call = request(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup: this.allowNonPublic ? undefined : this.publicOnlyLookup,
          timeout: timeoutMs,
        },
        (response) => {
          // Only the status matters; the body is read and dropped so the socket is freed.
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      call.on('timeout', () => call.destroy(new DeliveryError(`no answer within ${timeoutMs} ms`)));
      call.on('error', reject);
      call.end(body);
    }).catch((error: unknown) => Promise.reject(tenantSafe(error)));
  }
}
