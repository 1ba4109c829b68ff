import { resourceExhausted } from '@ota/errors';
import type { registry } from '@ota/proto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { authenticate, type Principal, requireDeveloperToken, requireDeviceToken, requirePersonalToken, requireStaff } from '../auth/principal';
import type { AccountStore } from '../auth/ports';
import type { Role } from '../auth/roles';
import type { SignInSessions } from '../auth/sign-in';
import { rateLimitClassOf, type RateLimitClass, type TokenRateLimiter } from './rate-limit';
import { parseBody, parseDeviceBody, parseQuery, type Accepted } from './validate';

/** The per-token rate limit applied to every authenticated operation. */
export interface OperationRateLimit {
  limiter: TokenRateLimiter;
  onLimited(kind: RateLimitClass): void;
}

/** Who may call an operation (docs/api.md, "Tokens and who may call what"): the gateway checks it, the OpenAPI document states it. */
export type Access = 'developer' | 'personal' | 'staff' | 'device' | 'public';

/** An operation's method and path as the document prints them: `GET /projects/:id/`. */
export type Route = `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} /${string}`;

/** What the operations of one section of the API share: their tag in the document and who may call them. */
export interface Section {
  tag: string;
  access: Access;
}

/** An operation as a route file declares it in its section: the route, and all that it does not share. */
export type Declaration = Omit<Operation, 'method' | 'path' | 'tag' | 'access'> & { route: Route };

/** Declares the operations of one section. */
export interface OperationSection<S extends Section> {
  add<const D extends Declaration>(declaration: D, handler: Handler<S & D>): void;
}

export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa path under /api/v1, e.g. `/projects/:id/devices/`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  /**
   * The operation acts in the project of the path (`:id`), and needs this role there (docs/api.md,
   * "Roles"): the table finds the project and checks the caller's role before the handler runs. A
   * project the caller has no role in is 404; a role short of this one is 403, naming it.
   */
  project?: Role;
  /** When some requests need more than `project` (a pause needs an approver): said in the document, checked by the handler with requireRole. */
  roleNote?: string;
  /** JSON body schema: the table validates the body with it. Omitted for operations without a JSON body. */
  body?: object;
  /** multipart/form-data fields, for uploads (streamed by the handler). */
  multipart?: { required: readonly string[]; properties: Record<string, object>; encoding?: Record<string, { contentType: string }> };
  /** An application/octet-stream body, read by the handler itself (an ELF, a piece of a core dump). */
  rawBody?: { description: string };
  /** A 200 that is a document as stored, not JSON of ours: its media types (an SBOM as uploaded). */
  rawResponse?: { mediaTypes: readonly string[]; description: string };
  /** Query parameter schema (an object schema of strings): the table validates the query with it. */
  query?: object;
  /** Answer schema by HTTP status; `null` for an empty body. Error answers are added for all. */
  responses: Record<number, object | null>;
  /** Statuses of error answers this operation gives besides the common ones. */
  errors?: readonly number[];
  /**
   * Query parameters the handler reads itself, which the table neither validates nor hands over:
   * the signed download URL's, whose every refusal is the signature's 403. Documented only.
   */
  documentedQuery?: ReadonlyArray<{ name: string; required: boolean; schema: object; description: string }>;
  /** Request headers the handler reads itself (documented only): an upload's Idempotency-Key. */
  headers?: ReadonlyArray<{ name: string; required: boolean; schema: object; description: string }>;
  /** Response headers worth a generated client's knowing, by status (documented only). */
  responseHeaders?: Readonly<Record<number, Readonly<Record<string, { description: string; schema: object }>>>>;
}

/** The project of the path, who acts in it, and with which role. */
export interface ProjectAccess {
  project: registry.Project;
  principal: Principal;
  role: Role;
}

/** Finds the project of the path for the caller and checks the caller's role there (routes/context.ts `projectFor`). */
export type ProjectResolver = (ctx: Context, needed: Role, what: string) => Promise<ProjectAccess>;

/**
 * What the table hands a handler, typed from the operation's declaration: the caller, the project
 * when the operation declares one, and the body and query as their schemas accept them.
 */
export type OperationInput<O extends Pick<Operation, 'access'>> = {
  principal: O['access'] extends 'public' ? undefined : Principal;
  project: O extends { project: Role } ? registry.Project : undefined;
  /** The caller's role in the project. */
  role: O extends { project: Role } ? Role : undefined;
  body: O extends { body: infer B } ? Accepted<B> : undefined;
  query: O extends { query: infer Q } ? Accepted<Q> : undefined;
};

export type Handler<O extends Pick<Operation, 'access'>> = (ctx: Context, input: OperationInput<O>) => Promise<void>;

/**
 * Every API route is declared here once: the router serves it and the OpenAPI document describes
 * it, so the two cannot drift apart. What a declaration states, the table does before the handler
 * runs, in this order: authenticate and rate-limit the caller, check its kind, find the project,
 * then validate the query and the body.
 */
export class OperationTable {
  readonly operations: Operation[] = [];
  /**
   * The operations a fleet calls (access `device`), apart from the rest, with the same prefix:
   * mounted first, a check is matched against these few routes and not against every route of
   * the API (the router tests each route's pattern in turn, on every request).
   */
  readonly deviceRouter: Router;

  constructor(
    /** Every operation but the device API's. */
    readonly router: Router,
    private readonly store: AccountStore,
    private readonly projectFor: ProjectResolver,
    private readonly rateLimit?: OperationRateLimit,
    /** Confirms single sign-on sessions with the identity provider; absent without single sign-on. */
    private readonly signIns?: SignInSessions,
  ) {
    this.deviceRouter = new Router({ prefix: router.opts.prefix, sensitive: router.opts.sensitive });
  }

  /** The operations added to the section get its tag and access. */
  section<const S extends Section>(section: S): OperationSection<S> {
    // The table builds the handler's input from the very declaration its type is derived from.
    return { add: (declaration, handler) => this.add(operationOf(section, declaration), handler as unknown as Handler<Operation>) };
  }

  private add(operation: Operation, handler: Handler<Operation>): void {
    // A path in a project that did not declare how it acts there would skip the owner check.
    if (operation.path.startsWith('/projects/:id/') && !operation.project) throw new Error(`${operation.operationId} is in a project: declare the role it needs there`);
    this.operations.push(operation);
    const check = ACCESS_CHECKS[operation.access];
    // The device API answers a malformed body with one readable sentence (400), the developer API
    // with a list of issues (422): docs/api.md, "Errors".
    const parseJson = (schema: object, body: unknown): unknown => (operation.access === 'device' ? parseDeviceBody(schema, body) : parseBody(schema, body));
    const router = operation.access === 'device' ? this.deviceRouter : this.router;
    router[operation.method](operation.path, async (ctx: Context) => {
      let principal: Principal | undefined;
      if (check) {
        principal = await authenticate(this.store, ctx, { acceptSession: operation.access !== 'device', signIns: this.signIns });
        this.enforceRateLimit(principal.token);
        check(ctx);
      }
      const access = operation.project ? await this.projectFor(ctx, operation.project, operation.summary) : undefined;
      const input = {
        principal,
        project: access?.project,
        role: access?.role,
        query: operation.query ? parseQuery(operation.query, { ...ctx.query }) : undefined,
        body: operation.body ? parseJson(operation.body, ctx.request.body) : undefined,
      };
      await handler(ctx, input as OperationInput<Operation>);
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

function operationOf(section: Section, { route, ...declared }: Declaration): Operation {
  const [method, path] = route.split(' ') as [string, string];
  return { ...declared, method: method.toLowerCase() as Operation['method'], path, ...section };
}

const ACCESS_CHECKS: Record<Access, ((ctx: Context) => unknown) | undefined> = {
  developer: requireDeveloperToken,
  personal: requirePersonalToken,
  staff: requireStaff,
  device: requireDeviceToken,
  public: undefined,
};
