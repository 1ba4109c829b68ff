import {
  Metadata,
  credentials,
  makeGenericClientConstructor,
  status,
  type Client,
  type ClientReadableStream,
  type ClientWritableStream,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { REQUEST_ID_HEADER, TRACEPARENT_HEADER } from '@ota/logging';
import type { ServiceMetrics } from '@ota/metrics';
import { once } from 'node:events';
import { grpcClientMetrics } from './metrics';
import { errorOfStatus } from './status';
import { callKindOf, type CallKindOf, type MethodDefinition, type RequestOf, type ResponseOf } from './types';

export interface CallOptions {
  /** Passed on in metadata so that every log line of one request shares it. */
  requestId?: string;
  /** The caller's W3C trace context, passed on as it came so that an operator's tracing can join the hops. */
  traceparent?: string;
  /** An absolute deadline (e.g. the caller's own, from its CallContext), or... */
  deadline?: Date | number;
  /** ...a timeout from now. Without either, the client's default applies. */
  timeoutMs?: number;
}

type UnaryCall<M> = (request: RequestOf<M>, options?: CallOptions) => Promise<ResponseOf<M>>;
type ClientStreamCall<M> = (requests: AsyncIterable<RequestOf<M>>, options?: CallOptions) => Promise<ResponseOf<M>>;
type ServerStreamCall<M> = (request: RequestOf<M>, options?: CallOptions) => AsyncIterable<ResponseOf<M>>;

/** The call of a method of each kind; bidirectional streaming is not supported. */
interface CallOfKind<M> {
  unary: UnaryCall<M>;
  client_stream: ClientStreamCall<M>;
  server_stream: ServerStreamCall<M>;
  bidi_stream: never;
}

/** A promise-based client derived from a ts-proto service definition. */
export type ServiceClient<S> = { [K in keyof S]: CallOfKind<S[K]>[CallKindOf<S[K]>] } & {
  close(): void;
  waitForReady(timeoutMs: number): Promise<void>;
};

export interface ClientSettings {
  /** Deadline of a unary call when the caller gives none. */
  defaultTimeoutMs: number;
  /** Deadline of a streaming call (uploads, downloads) when the caller gives none. */
  streamTimeoutMs: number;
  metrics?: ServiceMetrics;
}

// One long-lived HTTP/2 connection per peer, kept warm with pings so the first call after a quiet
// period does not pay for a reconnect.
const CHANNEL_OPTIONS = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': 8 * 1024 * 1024,
  'grpc.enable_retries': 1,
};

export function createServiceClient<S extends Record<string, MethodDefinition>>(
  serviceName: string,
  definition: S,
  address: string,
  settings: ClientSettings,
): ServiceClient<S> {
  const Constructor = makeGenericClientConstructor(definition as unknown as ServiceDefinition, serviceName);
  const client = new Constructor(address, credentials.createInsecure(), CHANNEL_OPTIONS) as Client &
    Record<string, (...args: unknown[]) => unknown>;
  const metrics = settings.metrics ? grpcClientMetrics(settings.metrics) : undefined;
  const wrapped: Record<string, unknown> = {
    close: () => client.close(),
    waitForReady: (timeoutMs: number) =>
      new Promise<void>((resolve, reject) =>
        client.waitForReady(Date.now() + timeoutMs, (error) => (error ? reject(error) : resolve())),
      ),
  };

  for (const [method, def] of Object.entries(definition)) {
    const fullName = `${serviceName}/${method}`;
    const type = callKindOf(def);
    const series = metrics?.of({ grpc_type: type, grpc_service: serviceName, grpc_method: method });
    const observe = (startedAt: bigint, code: status) => {
      if (!series) return;
      series.handled(code).inc();
      series.handling.observe(Number(process.hrtime.bigint() - startedAt) / 1e9);
    };
    const callArgs = (options: CallOptions | undefined, streaming: boolean) => {
      const metadata = new Metadata();
      if (options?.requestId) metadata.set(REQUEST_ID_HEADER, options.requestId);
      if (options?.traceparent) metadata.set(TRACEPARENT_HEADER, options.traceparent);
      const timeoutMs = options?.timeoutMs ?? (streaming ? settings.streamTimeoutMs : settings.defaultTimeoutMs);
      return { metadata, deadline: options?.deadline ?? Date.now() + timeoutMs };
    };
    const invoke = client[method]!.bind(client);

    if (type === 'bidi_stream') throw new Error(`${fullName}: bidirectional streaming is not supported`);

    if (type === 'unary') {
      wrapped[method] = (request: unknown, options?: CallOptions) =>
        new Promise((resolve, reject) => {
          const startedAt = process.hrtime.bigint();
          const { metadata, deadline } = callArgs(options, false);
          invoke(request, metadata, { deadline }, (error: ServiceError | null, response: unknown) => {
            observe(startedAt, error ? error.code : status.OK);
            if (error) reject(errorOfStatus(fullName, error));
            else resolve(response);
          });
        });
    } else if (type === 'client_stream') {
      wrapped[method] = async (requests: AsyncIterable<unknown>, options?: CallOptions) => {
        const startedAt = process.hrtime.bigint();
        const { metadata, deadline } = callArgs(options, true);
        let settled = false;
        let call!: ClientWritableStream<unknown>;
        const result = new Promise((resolve, reject) => {
          call = invoke(metadata, { deadline }, (error: ServiceError | null, response: unknown) => {
            settled = true;
            observe(startedAt, error ? error.code : status.OK);
            if (error) reject(errorOfStatus(fullName, error));
            else resolve(response);
          }) as ClientWritableStream<unknown>;
        });
        // The server may refuse before the source is exhausted; the caller sees that rejection
        // through the returned promise, so it must not count as unhandled meanwhile.
        result.catch(() => undefined);
        try {
          for await (const request of requests) {
            // The server may answer early (e.g. a refused manifest): stop sending then.
            if (settled) break;
            if (!call.write(request)) await Promise.race([once(call, 'drain'), result.catch(() => undefined)]);
          }
          if (!settled) call.end();
        } catch (error) {
          // The source failed (e.g. the uploader's connection dropped): abandon the call.
          call.cancel();
          throw error;
        }
        return result;
      };
    } else {
      wrapped[method] = (request: unknown, options?: CallOptions) => {
        const startedAt = process.hrtime.bigint();
        const { metadata, deadline } = callArgs(options, true);
        const call = invoke(request, metadata, { deadline }) as ClientReadableStream<unknown>;
        return (async function* () {
          try {
            for await (const message of call) yield message;
            observe(startedAt, status.OK);
          } catch (error) {
            const serviceError = error as ServiceError;
            observe(startedAt, serviceError.code ?? status.UNKNOWN);
            throw serviceError.code !== undefined ? errorOfStatus(fullName, serviceError) : error;
          } finally {
            // Reached early when the consumer stops reading (e.g. the HTTP client went away).
            call.cancel();
          }
        })();
      };
    }
  }
  return wrapped as ServiceClient<S>;
}
