import type { Ledger } from './ledger';

export interface CallOptions {
  token?: string;
  json?: unknown;
  form?: FormData;
  /** The client's deadline: a request without an answer by then is recorded as a hang. */
  deadlineMs: number;
}

export interface Answer {
  status: number;
  body: any;
}

/**
 * One HTTP request, recorded in the ledger whatever happens. Resolves the answer, or undefined
 * when there was none (a hang or a broken connection).
 */
export async function call(ledger: Ledger, gateways: readonly string[], gateway: number, method: string, path: string, options: CallOptions): Promise<Answer | undefined> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | FormData | undefined = options.form;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const url = path.startsWith('http') ? path : `${gateways[gateway]}${path}`;
  const at = Date.now();
  const record = { at, ms: 0, gateway, method, path: templateOf(url), retryAfter: null as string | null };
  try {
    const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(options.deadlineMs) });
    const contentType = response.headers.get('content-type') ?? '';
    const parsed: any = contentType.includes('application/json') ? await response.json() : Buffer.from(await response.arrayBuffer());
    ledger.requests.push({
      ...record,
      ms: Date.now() - at,
      outcome: response.status,
      retryAfter: response.headers.get('retry-after'),
      detail: response.status >= 400 ? String(parsed?.detail ?? '') : undefined,
    });
    return { status: response.status, body: parsed };
  } catch (error) {
    const name = (error as Error).name;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = [(error as Error).message, cause?.code, cause?.message].filter(Boolean).join(': ');
    ledger.requests.push({ ...record, ms: Date.now() - at, outcome: name === 'TimeoutError' || name === 'AbortError' ? 'hang' : 'network', detail });
    return undefined;
  }
}

/** The path with ids replaced, so that the report groups requests by endpoint. */
function templateOf(url: string): string {
  const { pathname } = new URL(url);
  return pathname.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, ':id');
}
