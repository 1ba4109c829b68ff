import { invalidArgument } from '@ota/errors';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { type Logger, REQUEST_ID_HEADER, TRACEPARENT_HEADER, logFieldsOf, requestIdFrom, traceparentFrom } from '@ota/logging';
import type { GatewayDeps } from './deps';
import { HttpError, UNAVAILABLE_RETRY_AFTER_SECONDS, ValidationFailed, errorMiddleware } from './http/errors';
import { firstDuplicateKey } from './http/duplicate-keys';
import { refuseMalformedHttp } from './http/http-syntax';
import { jsonShapeProblem } from './http/json-limits';
import { forwardedHeadersOnlyFrom, parseTrustedProxies } from './http/trusted-proxies';
import { ConcurrencyLimiter, shedLoad } from './http/load-shedding';
import Router from '@koa/router';
import { buildOpenApiDocument } from './http/openapi';
import { OperationTable, type Operation } from './http/operations';
import { TokenRateLimiter } from './http/rate-limit';
import { requestDeadline } from './http/request-deadline';
import { httpMetrics, methodLabel } from './http/http-metrics';
import { artifactRoutes } from './routes/artifacts';
import { crashRoutes } from './routes/crashes';
import { fleetRoutes } from './routes/fleet';
import { sbomRoutes } from './routes/sboms';
import { exposureRoutes } from './routes/exposure';
import { vulnerabilityRoutes } from './routes/vulnerabilities';
import { deploymentRoutes } from './routes/deployments';
import { deviceApiRoutes } from './routes/device-api';
import { deviceRoutes } from './routes/devices';
import { groupAndChannelRoutes } from './routes/groups-and-channels';
import { healthRoutes } from './routes/health';
import { memberRoutes } from './routes/members';
import { projectRoutes } from './routes/projects';
import { sessionRoutes } from './routes/session';
import { consoleRoutes } from './routes/console';
import { projectFor } from './routes/context';
import { tokenRoutes } from './routes/tokens';
import { webhookRoutes } from './routes/webhooks';

const API_PREFIX = '/api/v1';
const API_VERSION = '0.1.0';

/** Every group of API operations, in the order the router tries them. */
const API_ROUTES = [deviceApiRoutes, sessionRoutes, projectRoutes, memberRoutes, tokenRoutes, deviceRoutes, fleetRoutes, groupAndChannelRoutes, artifactRoutes, sbomRoutes, exposureRoutes, vulnerabilityRoutes, crashRoutes, deploymentRoutes, webhookRoutes];

/**
 * The OpenAPI document the gateway serves, built without serving: for docs/openapi.json, which the
 * console's types are generated from. Declaring a route reads none of its dependencies (handlers
 * do, per request), so none are given.
 */
export function describeApi(): object {
  const table = new OperationTable(new Router({ prefix: API_PREFIX }), undefined as never, () => {
    throw new Error('a table built to describe the API serves no requests');
  });
  const declarationOnly = { clients: {}, config: {} } as unknown as GatewayDeps;
  for (const addRoutes of API_ROUTES) addRoutes(table, declarationOnly);
  return buildOpenApiDocument(table.operations, API_VERSION);
}

/** The paths of the operations a fleet calls (access `device`), with and without the trailing slash. */
function deviceApiPaths(operations: readonly Operation[]): Set<string> {
  const paths = operations.filter((operation) => operation.access === 'device').map((operation) => `${API_PREFIX}${operation.path}`);
  return new Set([...paths, ...paths.map((path) => path.replace(/\/$/, ''))]);
}

// Text the stores cannot hold is refused at the door, before it reaches a service: a lone UTF-16
// surrogate (from a `\\ud800` escape) is valid JSON but cannot be encoded as UTF-8, and a NUL
// character cannot be stored or searched in PostgreSQL-backed document stores.
const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The location of the first string (or key) in `value` that holds unstorable text, if any. */
function unstorableTextAt(value: unknown, loc: Array<string | number>, depth = 0): Array<string | number> | undefined {
  if (typeof value === 'string') return UNSTORABLE_TEXT.test(value) ? loc : undefined;
  if (!value || typeof value !== 'object' || depth > 32) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (UNSTORABLE_TEXT.test(key)) return [...loc, key];
    const found = unstorableTextAt(inner, [...loc, Array.isArray(value) ? Number(key) : key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** 400 for a JSON body that gives a key twice in one object (http/duplicate-keys.ts). */
async function refuseDuplicateKeys(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const text = (ctx.request as { rawBody?: unknown }).rawBody;
  const repeated = typeof text === 'string' ? firstDuplicateKey(text) : undefined;
  if (repeated) throw invalidArgument(`the JSON body gives the key ${JSON.stringify(repeated.join('.'))} more than once in one object`);
  await next();
}

/** 400 for a body nested too deep or of too many values (http/json-limits.ts), on every API. */
async function refuseOutsizedJson(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const problem = jsonShapeProblem(ctx.request.body);
  if (problem) throw invalidArgument(problem);
  await next();
}

/**
 * 422 on the developer API, 400 on the device API (docs/api.md, "Conventions"), like any malformed
 * input. The device API is everything under /ota/, the download of a signed URL included.
 */
function refuseUnstorableText() {
  return async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    const loc = unstorableTextAt(ctx.request.body, ['body']) ?? unstorableTextAt(ctx.query, ['query']);
    if (loc) {
      const msg = 'text may not hold NUL characters or unpaired UTF-16 surrogates';
      if (ctx.path.startsWith(`${API_PREFIX}/ota/`)) throw invalidArgument(`${loc.slice(1).join('.')}: ${msg}`);
      throw new ValidationFailed([{ loc, msg, type: 'text' }]);
    }
    await next();
  };
}

/**
 * What every request's `ctx.state` starts with: its request id and trace context, and a logger
 * that carries them. A class, not a property defined on Koa's object per request: the logger's
 * getter is then its prototype's, and most requests never call it (they log nothing).
 */
class RequestState {
  private childLogger?: Logger;

  constructor(
    readonly requestId: string,
    readonly traceparent: string | undefined,
    private readonly baseLogger: Logger,
  ) {}

  get logger(): Logger {
    return (this.childLogger ??= this.baseLogger.child(logFieldsOf({ requestId: this.requestId, traceparent: this.traceparent })));
  }
}

/** Builds the gateway's Koa app without listening, so that tests can drive it directly. */
export function createApp(deps: GatewayDeps): Koa {
  const { config } = deps;
  const metrics = httpMetrics(deps.metrics);
  // Koa reads forwarded headers; forwardedHeadersOnlyFrom (first below) leaves them only on requests from TRUSTED_PROXIES.
  const app = new Koa({ proxy: true });
  app.use(forwardedHeadersOnlyFrom(parseTrustedProxies(config.TRUSTED_PROXIES)));
  const rateLimiter = new TokenRateLimiter({
    developer: { perSecond: config.RATE_LIMIT_DEVELOPER_PER_SECOND, burst: config.RATE_LIMIT_DEVELOPER_BURST },
    device_token: { perSecond: config.RATE_LIMIT_DEVICE_TOKEN_PER_SECOND, burst: config.RATE_LIMIT_DEVICE_TOKEN_BURST },
    fleet_token: { perSecond: config.RATE_LIMIT_FLEET_TOKEN_PER_SECOND, burst: config.RATE_LIMIT_FLEET_TOKEN_BURST },
  });
  const api = new OperationTable(new Router({ prefix: API_PREFIX, sensitive: true }), deps.store, (ctx, needed, what) => projectFor(deps, ctx, needed, what), {
    limiter: rateLimiter,
    onLimited: (kind) => metrics.rateLimited.inc({ token_kind: kind }),
  }, deps.signIn?.sessions);
  for (const addRoutes of API_ROUTES) addRoutes(api, deps);
  const devicePaths = deviceApiPaths(api.operations);
  // Mounted after the middleware below; matched at request time, so that the metrics name the
  // route pattern of a request refused before routing (413, the deadline's 503, shed load) or by
  // method (405). `unmatched` only where no route has the path.
  // The device API's few routes first: a fleet's requests are matched against them alone.
  const routers = [api.deviceRouter, healthRoutes(deps), consoleRoutes(deps), api.router];
  const routePatternOf = (path: string) => routers.flatMap((router) => router.match(path, '').path).find((layer) => layer.methods.length > 0)?.path.toString() ?? 'unmatched';

  app.use(async (ctx, next) => {
    const requestId = requestIdFrom(ctx.get(REQUEST_ID_HEADER) || undefined);
    const traceparent = traceparentFrom(ctx.get(TRACEPARENT_HEADER) || undefined);
    ctx.state = new RequestState(requestId, traceparent, deps.logger);
    ctx.set(REQUEST_ID_HEADER, requestId);
    const startedAt = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? routePatternOf(ctx.path);
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      const method = methodLabel(ctx.method);
      metrics.requests.inc({ method, route, status: String(ctx.status) });
      metrics.duration.observe({ method, route }, seconds);
      // One line per request at debug: at fleet rates an info-level access log would dominate.
      if (deps.logger.isLevelEnabled('debug')) ctx.state.logger.debug({ method: ctx.method, route, status: ctx.status, ms: Math.round(seconds * 1000) }, 'request');
    }
  });
  app.use(errorMiddleware(deps.logger));
  app.use(refuseMalformedHttp);
  app.use(requestDeadline(deps.config.REQUEST_TIMEOUT_MS, UNAVAILABLE_RETRY_AFTER_SECONDS, deps.logger, () => metrics.timedOut.inc()));
  // The device API is what a whole fleet hits at once; its overload is shed here, before the body
  // is parsed and the token read.
  const deviceApiLimiter = new ConcurrencyLimiter({
    maxConcurrent: deps.config.DEVICE_API_MAX_CONCURRENCY,
    maxQueued: deps.config.DEVICE_API_MAX_QUEUED,
    maxWaitMs: deps.config.DEVICE_API_MAX_WAIT_MS,
  });
  const shedDeviceApi = shedLoad(deviceApiLimiter, deps.config.OVERLOAD_RETRY_AFTER_SECONDS, () => metrics.shed.inc());
  app.use((ctx, next) => (devicePaths.has(ctx.path) ? shedDeviceApi(ctx, next) : next()));
  app.use(
    koaBody({
      // Multipart bodies are streamed by the upload routes themselves, never buffered here.
      multipart: false,
      urlencoded: false,
      text: false,
      json: true,
      jsonLimit: deps.config.JSON_BODY_LIMIT_BYTES,
      jsonStrict: true,
      // The raw text (ctx.request.rawBody), for refuseDuplicateKeys: the parsed body has lost the repeats.
      includeUnparsed: true,
      onError: (error) => {
        const tooLarge = (error as { status?: number }).status === 413;
        throw tooLarge
          ? new HttpError(413, `JSON body is larger than ${deps.config.JSON_BODY_LIMIT_BYTES} bytes`)
          : invalidArgument('body is not valid JSON');
      },
    }),
  );

  app.use(refuseDuplicateKeys);
  app.use(refuseOutsizedJson);
  app.use(refuseUnstorableText());
  const openApiDocument = buildOpenApiDocument(api.operations, API_VERSION);
  api.router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });

  for (const router of routers) app.use(router.routes());
  // What no route served: a known path with another method is 405 with Allow (OPTIONS lists the
  // methods), anything else 404; both with a `detail`, as every error.
  app.use((ctx) => {
    // The routes the path names most literally: `.../members/changes/` is the changes route's, not
    // a member called "changes" (whose DELETE it would otherwise advertise).
    const layers = routers.flatMap((router) => router.match(ctx.path, ctx.method).path);
    const fewestParams = Math.min(...layers.map((layer) => layer.paramNames.length));
    const allowed = new Set(layers.filter((layer) => layer.paramNames.length === fewestParams).flatMap((layer) => layer.methods));
    if (allowed.size === 0) {
      ctx.status = 404;
      ctx.body = { detail: 'no such endpoint' };
      return;
    }
    const allow = [...allowed, 'OPTIONS'].join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allow);
      return;
    }
    throw new HttpError(405, `${ctx.method} is not allowed on this path`, { Allow: allow });
  });
  return app;
}
