import createClient from 'openapi-fetch';
import type { components, operations, paths } from './generated/api';

// Every call goes through this client, generated from docs/openapi.json: a path, a parameter or a
// body the document does not have fails to compile.

export type Schemas = components['schemas'];

/**
 * The JSON body of an operation, by its operationId. Bodies are declared with this type before
 * they are sent: openapi-fetch's generic parameters would let an unknown field through, a typed
 * literal does not.
 */
export type BodyOf<O extends keyof operations> = operations[O] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
export type Api = ReturnType<typeof createClient<paths>>;

/** An answer of the API that refused the call: its status and `detail`, as one readable text. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    detail: string,
    /** The answer's Retry-After in seconds, when it sent one (429, 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(detail);
  }
}

/** The connection settings, from flags or OTA_URL / OTA_TOKEN / OTA_PROJECT. */
export interface Connection {
  url: string;
  token: string;
}

export function apiClient(connection: Connection): Api {
  return createClient<paths>({ baseUrl: connection.url.replace(/\/+$/, ''), headers: { authorization: `Bearer ${connection.token}`, 'user-agent': 'otactl/0.1' } });
}

/** The API's `detail` as one text: a 422 list becomes `field: message; ...`. */
export function detailOf(error: unknown, status: number): string {
  const detail = (error as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((issue: { loc?: unknown[]; msg?: string }) => `${(issue.loc ?? []).slice(1).join('.') || 'body'}: ${issue.msg ?? ''}`).join('; ');
  return `the service answered ${status} without a detail`;
}

/** The data of an answer, or an ApiRefusal with its detail. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) {
    const retryAfter = Number(response.headers.get('retry-after') ?? '');
    throw new ApiRefusal(response.status, detailOf(error, response.status), Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
  }
  return data;
}
