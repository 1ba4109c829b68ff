import { resourceExhausted } from '@ota/errors';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { authenticate, type Principal, requireDeveloperToken, requireDeviceToken, requirePersonalToken, requireStaff } from '../auth/principal';
import type { GatewayStore } from '../adapters/mongo/gateway-store';
import { rateLimitClassOf, type RateLimitClass, type TokenRateLimiter } from './rate-limit';

/** The per-token rate limit applied to every authenticated operation. */
export interface OperationRateLimit {
  limiter: TokenRateLimiter;
  onLimited(kind: RateLimitClass): void;
}

/** Who may call an operation (spec 5.4): the gateway checks it, the OpenAPI document states it. */
export type Access = 'developer' | 'personal' | 'staff' | 'device' | 'public';

export interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Koa path under /api/v1, e.g. `/projects/:id/devices/`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  /** JSON body schema; omitted for operations without a JSON body. */
  body?: object;
  /** multipart/form-data fields, for uploads. */
  multipart?: { required: string[]; properties: Record<string, object> };
  /** Query parameter schema (an object schema of strings). */
  query?: object;
  /** Answer schema by HTTP status; `null` for an empty body. Error answers are added for all. */
  responses: Record<number, object | null>;
  /** Statuses of error answers this operation gives besides the common ones. */
  errors?: number[];
}

export type Handler = (ctx: Context) => Promise<void>;

/**
 * Every API route is declared here once: the router serves it and the OpenAPI document describes
 * it, so the two cannot drift apart.
 */
export class OperationTable {
  readonly operations: Operation[] = [];

  constructor(
    readonly router: Router,
    private readonly store: GatewayStore,
    private readonly rateLimit?: OperationRateLimit,
  ) {}

  add(operation: Operation, handler: Handler): void {
    this.operations.push(operation);
    const check = ACCESS_CHECKS[operation.access];
    this.router[operation.method](operation.path, async (ctx: Context) => {
      if (check) {
        const principal = await authenticate(this.store, ctx);
        this.enforceRateLimit(principal.token);
        check(ctx);
      }
      await handler(ctx);
    });
  }

  private enforceRateLimit(token: Principal['token']): void {
    if (!this.rateLimit) return;
    const kind = rateLimitClassOf(token);
    const waitSeconds = this.rateLimit.limiter.take(token.id, kind);
    if (waitSeconds === 0) return;
    this.rateLimit.onLimited(kind);
    throw resourceExhausted(`this token is over its rate limit; retry in ${waitSeconds} seconds`, waitSeconds);
  }
}

const ACCESS_CHECKS: Record<Access, ((ctx: Context) => unknown) | undefined> = {
  developer: requireDeveloperToken,
  personal: requirePersonalToken,
  staff: requireStaff,
  device: requireDeviceToken,
  public: undefined,
};
