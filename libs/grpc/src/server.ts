import { once } from 'node:events';
import {
  Server,
  ServerCredentials,
  status,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { type Logger, REQUEST_ID_HEADER, TRACEPARENT_HEADER, logFieldsOf, requestIdFrom, traceparentFrom } from '@ota/logging';
import type { ServiceMetrics } from '@ota/metrics';
import { HealthImplementation } from 'grpc-health-check';
import { grpcCodeLabel, grpcServerMetrics } from './metrics';
import { statusOfError } from './status';
import { callKindOf, type CallKindOf, type MethodDefinition, type RequestOf, type ResponseOf } from './types';

/** What every handler gets besides its request. */
export interface CallContext {
  readonly requestId: string;
  /** The caller's W3C trace context, if it sent one; pass it on with the request id. */
  readonly traceparent?: string;
  readonly logger: Logger;
  /** Forwarded as-is to the calls this handler makes, so one deadline spans the whole request. */
  readonly deadline: Date | number;
  /** True once the caller has gone (cancelled, or its deadline passed): long work may stop early. */
  readonly cancelled: () => boolean;
}

/** What every kind of incoming call has. */
type IncomingCall = Pick<ServerUnaryCall<unknown, unknown>, 'metadata' | 'getDeadline' | 'cancelled'>;

type UnaryHandler<M> = (request: RequestOf<M>, ctx: CallContext) => Promise<ResponseOf<M>>;
type ClientStreamHandler<M> = (requests: AsyncIterable<RequestOf<M>>, ctx: CallContext) => Promise<ResponseOf<M>>;
type ServerStreamHandler<M> = (request: RequestOf<M>, ctx: CallContext) => AsyncIterable<ResponseOf<M>>;

/** The handler of a method of each kind; bidirectional streaming is not supported. */
interface HandlerOfKind<M> {
  unary: UnaryHandler<M>;
  client_stream: ClientStreamHandler<M>;
  server_stream: ServerStreamHandler<M>;
  bidi_stream: never;
}

/** The async handlers a service implements, derived from its ts-proto definition. */
export type Handlers<S> = { [K in keyof S]: HandlerOfKind<S[K]>[CallKindOf<S[K]>] };

export interface GrpcServerDeps {
  logger: Logger;
  metrics: ServiceMetrics;
}

// Clients keep connections open with pings; the server allows that without an active call.
const SERVER_OPTIONS = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': 8 * 1024 * 1024,
};

/**
 * A grpc-js server that serves the standard health service and turns typed async handlers into
 * grpc-js handlers: request ids from metadata, one log line per failure, metrics, and domain errors
 * sent as status codes (anything else is INTERNAL with a generic message).
 */
export class GrpcServer {
  readonly server = new Server(SERVER_OPTIONS);
  readonly health = new HealthImplementation({ '': 'NOT_SERVING' });
  private readonly serviceNames: string[] = [];

  constructor(private readonly deps: GrpcServerDeps) {
    this.health.addToServer(this.server);
  }

  addService<S extends Record<string, MethodDefinition>>(serviceName: string, definition: S, handlers: Handlers<S>): void {
    const implementation: UntypedServiceImplementation = {};
    for (const [method, def] of Object.entries(definition)) {
      const handler = (handlers as Record<string, unknown>)[method] as (...args: never[]) => unknown;
      if (!handler) throw new Error(`${serviceName}.${method} has no handler`);
      implementation[method] = this.wrap(serviceName, method, def, handler);
    }
    this.server.addService(definition as unknown as ServiceDefinition, implementation);
    this.serviceNames.push(serviceName);
    this.health.setStatus(serviceName, 'NOT_SERVING');
  }

  /** Binds and starts serving; resolves to the bound port (useful with port 0). */
  async listen(address: string): Promise<number> {
    const port = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(address, ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
    for (const name of ['', ...this.serviceNames]) this.health.setStatus(name, 'SERVING');
    return port;
  }

  /** Stops taking calls, lets in-flight calls finish for up to `graceMs`, then cancels the rest. */
  async shutdown(graceMs: number): Promise<void> {
    for (const name of ['', ...this.serviceNames]) this.health.setStatus(name, 'NOT_SERVING');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private contextOf(call: IncomingCall, method: string): CallContext {
    return new IncomingCallContext(call, method, this.deps.logger);
  }

  private wrap(serviceName: string, method: string, def: MethodDefinition, handler: (...args: never[]) => unknown) {
    const type = callKindOf(def);
    const metrics = grpcServerMetrics(this.deps.metrics).of({ grpc_type: type, grpc_service: serviceName, grpc_method: method });
    const fullName = `${serviceName}/${method}`;

    const finish = (ctx: CallContext, startedAt: bigint, error: unknown, answered = true) => {
      const code = error === undefined ? status.OK : statusOfError(error).code;
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      metrics.handled(code).inc();
      metrics.handling.observe(seconds);
      // The caller's deadline passed (or it went) before this answer: say which call held it up,
      // for the caller logs only its own timeout.
      if (answered && ctx.cancelled()) ctx.logger.warn({ code: grpcCodeLabel(code), ms: Math.round(seconds * 1000) }, 'rpc finished after its caller gave up');
      if (code === status.INTERNAL) ctx.logger.error({ err: error }, 'rpc failed');
      else if (code === status.UNAVAILABLE) ctx.logger.warn({ err: error }, 'rpc failed: a backing store is unavailable');
      else if (error !== undefined) ctx.logger.debug({ code: grpcCodeLabel(code), detail: (error as Error).message }, 'rpc refused');
      return error === undefined ? undefined : statusOfError(error);
    };
    const start = (call: IncomingCall) => {
      metrics.started.inc();
      return { startedAt: process.hrtime.bigint(), ctx: this.contextOf(call, fullName) };
    };
    /** Sends a unary answer once the handler settles; `onRefused` runs before a refusal is sent. */
    const answer = (call: IncomingCall, callback: sendUnaryData<unknown>, handle: (ctx: CallContext) => Promise<unknown>, onRefused = () => {}) => {
      const { startedAt, ctx } = start(call);
      handle(ctx).then(
        (response) => {
          finish(ctx, startedAt, undefined);
          callback(null, response);
        },
        (error: unknown) => {
          onRefused();
          callback(finish(ctx, startedAt, error) ?? null);
        },
      );
    };

    if (type === 'unary') {
      const unary = handler as UnaryHandler<unknown>;
      return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) =>
        answer(call, callback, (ctx) => unary(call.request as never, ctx));
    }
    if (type === 'client_stream') {
      const clientStream = handler as ClientStreamHandler<unknown>;
      return (call: ServerReadableStream<unknown, unknown>, callback: sendUnaryData<unknown>) =>
        answer(
          call,
          callback,
          (ctx) => clientStream(call as AsyncIterable<never>, ctx),
          // Stop reading what the client still sends: the answer is already decided.
          () => call.destroy(),
        );
    }
    if (type === 'server_stream') {
      const serverStream = handler as ServerStreamHandler<unknown>;
      return (call: ServerWritableStream<unknown, unknown>) => {
        const { startedAt, ctx } = start(call);
        const pump = async () => {
          for await (const message of serverStream(call.request as never, ctx)) {
            if (call.cancelled) return;
            // Respect the peer's flow control so a slow reader never makes us buffer a whole binary.
            if (!call.write(message)) await Promise.race([once(call, 'drain'), once(call, 'cancelled')]);
          }
        };
        pump().then(
          // A reader that stops reading (a device's download cut short) is no late answer.
          () => {
            finish(ctx, startedAt, undefined, false);
            call.end();
          },
          (error: unknown) => call.emit('error', finish(ctx, startedAt, error, false)),
        );
      };
    }
    throw new Error(`${fullName}: bidirectional streaming is not supported`);
  }
}

/**
 * A call's context, as a class rather than an object literal with a getter: it is made for every
 * call, and V8 builds a literal with an accessor through its runtime, not inline.
 */
class IncomingCallContext implements CallContext {
  readonly requestId: string;
  readonly traceparent?: string;
  readonly deadline: Date | number;
  private childLogger?: Logger;

  constructor(
    private readonly call: IncomingCall,
    private readonly method: string,
    private readonly baseLogger: Logger,
  ) {
    this.requestId = requestIdFrom(call.metadata.get(REQUEST_ID_HEADER)[0]?.toString());
    this.traceparent = traceparentFrom(call.metadata.get(TRACEPARENT_HEADER)[0]?.toString());
    this.deadline = call.getDeadline();
  }

  // Made when first used: most calls log nothing, and a child logger is built per call.
  get logger(): Logger {
    return (this.childLogger ??= this.baseLogger.child({ ...logFieldsOf({ requestId: this.requestId, traceparent: this.traceparent }), rpc: this.method }));
  }

  cancelled(): boolean {
    return this.call.cancelled;
  }
}
