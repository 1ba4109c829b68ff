import { ROLE_POWERS } from '../auth/roles';
import type { Access, Operation } from './operations';
import * as R from './response-schemas';

const API_PREFIX = '/api/v1';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Refused: a rule of the API (the `detail` says which).',
  401: 'Token missing, invalid, revoked, or of a kind that does not cover this endpoint.',
  403: 'A valid credential that this endpoint does not accept.',
  404: 'No such resource, or not one the caller may see.',
  409: 'Conflicts with what exists (a download: its offer is held, the deployment paused).',
  410: 'A download whose offer was withdrawn: the deployment cancelled or completed, the build archived, the device deactivated, deleted or no longer targeted.',
  413: 'The JSON body is larger than the limit.',
  416: 'The range starts past the end of the build; `Content-Range: bytes */size` gives its size.',
  422: 'The body or query fails its schema; `detail` lists each problem.',
  429: "The token is over its rate limit (per gateway replica); retry after `Retry-After` seconds.",
  503: 'The service is busy (load is being shed) or a service or store is unavailable; retry after `Retry-After` seconds.',
};

function errorsOf(operation: Operation): number[] {
  const common: Record<Access, number[]> = {
    developer: [400, 401, 403, 404, 422, 429, 503],
    personal: [400, 401, 403, 404, 422, 429, 503],
    staff: [401, 403, 422, 429, 503],
    device: [400, 401, 403, 404, 429, 503],
    public: [403, 404, 503],
  };
  const statuses = new Set([...common[operation.access], ...(operation.errors ?? [])]);
  // Any JSON body may be refused before its schema is read: too large (413), or not JSON, nested too
  // deep or holding too many values (400, http/json-limits.ts).
  if (operation.body) {
    statuses.add(413);
    statuses.add(400);
  }
  return [...statuses].sort();
}

const SECURITY: Record<Access, string> = {
  developer: 'A personal token, or a project token of `api` scope (or the console session of a personal token).',
  personal: 'A personal token only (or its console session); a project token gets 403.',
  staff: "A staff user's personal token; others get 403.",
  device: 'A project token of `device` scope (with `device_id` in the body), or a per-device token.',
  public: 'No bearer token: a download URL carries its own signature, and the console sign-in takes a personal token in its body.',
};

/** Which credentials an operation takes: a bearer token, and for people also the console's session cookie. */
function securityOf(access: Access): object[] {
  if (access === 'public') return [];
  if (access === 'device') return [{ bearer: [] }];
  return [{ bearer: [] }, { session: [] }];
}

/** Every answer schema that response-schemas.ts exports by name, as a component of the document. */
const COMPONENT_NAMES: ReadonlyMap<object, string> = new Map(
  Object.entries(R).flatMap(([name, value]) => (typeof value === 'object' && !Array.isArray(value) ? [[value as object, name] as const] : [])),
);

/**
 * The schema with each named answer schema inside it replaced by a reference to its component, so
 * that a Device is one definition in the document (and one type in a generated client), not a
 * copy in every answer that holds one.
 */
function referencingComponents(schema: unknown, isComponent = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => referencingComponents(item));
  if (typeof schema !== 'object' || schema === null) return schema;
  const name = COMPONENT_NAMES.get(schema);
  if (name !== undefined && !isComponent) return { $ref: `#/components/schemas/${name}` };
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, referencingComponents(value)]));
}

/** A multipart body's schema, its named parts referenced as components, and how each part is encoded. */
function multipartContent({ encoding, ...schema }: NonNullable<Operation['multipart']>): object {
  return { schema: referencingComponents({ type: 'object', ...schema }), ...(encoding ? { encoding } : {}) };
}

/** Path parameters that are no UUID; every other one is. */
const PATH_PARAMETER_SCHEMAS: Record<string, object> = {
  email: { type: 'string', format: 'email', description: 'The invited address, URL-encoded.' },
  group: { type: 'string', minLength: 1, description: "The identity provider's group name, URL-encoded." },
  vid: { type: 'string', pattern: '^(CVE-\\d{4}-\\d{4,7}|GHSA(-[23456789cfghjmpqrvwx]{4}){3})$', description: 'The advisory id: CVE-… or GHSA-…' },
};

/** The OpenAPI 3.1 document of the HTTP API, built from the same table that serves it. */
export function buildOpenApiDocument(operations: readonly Operation[], version: string): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const operation of operations) {
    const path = API_PREFIX + operation.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters: object[] = [...operation.path.matchAll(/:([A-Za-z_]+)/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: PATH_PARAMETER_SCHEMAS[match[1]!] ?? { type: 'string', format: 'uuid' },
    }));
    const query = operation.query as { properties?: Record<string, object>; required?: string[] } | undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema });
    }
    for (const { name, required, schema, description } of operation.documentedQuery ?? []) parameters.push({ name, in: 'query', required, schema, description });
    for (const { name, required, schema, description } of operation.headers ?? []) parameters.push({ name, in: 'header', required, schema, description });
    const responses: Record<string, object> = {};
    const headersOf = (status: number): object => {
      const headers: Record<string, object> = { ...(operation.responseHeaders?.[status] ?? {}) };
      if (status === 429 || status === 503) headers['Retry-After'] = { description: 'Seconds to wait before retrying, already spread at random.', schema: { type: 'integer', minimum: 0 } };
      return Object.keys(headers).length > 0 ? { headers } : {};
    };
    for (const [status, schema] of Object.entries(operation.responses)) {
      if (status === '200' && operation.rawResponse) {
        const document = { type: 'string' };
        responses[status] = { description: operation.rawResponse.description, ...headersOf(200), content: Object.fromEntries(operation.rawResponse.mediaTypes.map((type) => [type, { schema: document }])) };
        continue;
      }
      responses[status] =
        schema === null
          ? { description: 'No content.', ...headersOf(Number(status)) }
          : {
              description: 'Success.',
              ...headersOf(Number(status)),
              content: {
                [operation.operationId === 'downloadArtifact' ? 'application/octet-stream' : 'application/json']: { schema: referencingComponents(schema) },
              },
            };
    }
    for (const status of errorsOf(operation)) {
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status],
        ...headersOf(status),
        content: { 'application/json': { schema: referencingComponents(status === 422 ? R.ValidationError : R.Error) } },
      };
    }
    const requestBody = operation.body
      ? { required: true, content: { 'application/json': { schema: operation.body } } }
      : operation.multipart
        ? { required: true, content: { 'multipart/form-data': multipartContent(operation.multipart) } }
        : operation.rawBody
          ? { required: true, description: operation.rawBody.description, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } }
          : undefined;
    paths[path] ??= {};
    paths[path]![operation.method] = {
      operationId: operation.operationId,
      summary: operation.summary,
      description: [operation.description, `**Who may call:** ${SECURITY[operation.access]}`, roleLine(operation)].filter(Boolean).join('\n\n'),
      tags: [operation.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
      security: securityOf(operation.access),
      // Machine-readable "who may call" (docs/api.md, "Tokens and who may call what"): developer, personal, staff, device or public.
      'x-access': operation.access,
      // Machine-readable role in the project (docs/api.md, "Roles"): viewer, operator, approver or admin.
      ...(operation.project ? { 'x-role': operation.project } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'OTA firmware update service',
      version,
      description:
        'The developer API (`/projects`, `/me`, `/users`) for people and CI, and the device API (`/ota`) for fleets. Errors carry a `detail` string; body and query schema failures on the developer API are 422 with `detail` as an array.',
    },
    servers: [{ url: '/' }],
    components: {
      schemas: Object.fromEntries([...COMPONENT_NAMES].map(([schema, name]) => [name, referencingComponents(schema, true)]).sort(([a], [b]) => String(a).localeCompare(String(b)))),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'ota_session',
          description: 'The web console\'s session (POST /api/v1/session/); mutating calls with it also need the `x-csrf-token` header.',
        },
      },
    },
    paths,
  };
}

/** The role an operation in a project needs, in words (docs/api.md, "Roles"). */
function roleLine(operation: Operation): string | undefined {
  if (!operation.project) return undefined;
  return `**Role needed in the project:** ${operation.project} (${ROLE_POWERS[operation.project]}).${operation.roleNote ? ` ${operation.roleNote}` : ''}`;
}
