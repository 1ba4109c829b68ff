// The console's only way to the service: the public developer API, on this origin, with the
// session cookie. Every mutating call carries the session's CSRF token; every failure becomes an
// ApiError holding the API's own `detail`, which the pages show as they got it.

export const API = '/api/v1';

/** A 422 `detail` entry (docs/api.md, "Errors"). */
interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail);
  }
}

/** The API's `detail`, as one readable text: a 422 array becomes `field: message; ...`. */
export function detailOf(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return (detail as ValidationIssue[]).map((issue) => `${issue.loc.slice(1).join('.') || 'body'}: ${issue.msg}`).join('; ');
  }
  return `the server answered ${status} without a detail`;
}

let csrfToken = '';

/** Kept in memory only: after a reload the console asks GET /session/ for it again. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when the API says the session is over (401), so the app can show the sign-in page. */
let onSignedOut: () => void = () => undefined;
export function whenSignedOut(listener: () => void): void {
  onSignedOut = listener;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await requestWithHeaders<T>(method, path, body)).body;
}

/** `request`, with the answer's headers (a device page's `X-Total-Count`). */
export async function requestWithHeaders<T>(method: string, path: string, body?: unknown): Promise<{ body: T; headers: Headers }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(`${API}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'the service cannot be reached; check the connection and try again');
  }
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { detail: text.slice(0, 200) };
  }
  if (!response.ok) {
    if (response.status === 401 && path !== '/session/') onSignedOut();
    throw new ApiError(response.status, detailOf(parsed, response.status));
  }
  return { body: parsed as T, headers: response.headers };
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}) => request<T>('POST', path, body);
export const patch = <T>(path: string, body: unknown) => request<T>('PATCH', path, body);
export const del = (path: string) => request<null>('DELETE', path);

/**
 * A multipart upload with progress: fetch cannot report upload progress, XMLHttpRequest can.
 * `onProgress` gets the share sent, 0 to 1.
 */
export function upload<T>(path: string, form: FormData, onProgress: (share: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${API}${path}`);
    xhr.setRequestHeader('x-csrf-token', csrfToken);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onerror = () => reject(new ApiError(0, 'the upload was interrupted; check the connection and try again'));
    xhr.onload = () => {
      let parsed: unknown = null;
      try {
        parsed = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        parsed = { detail: xhr.responseText.slice(0, 200) };
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(parsed as T);
      else {
        if (xhr.status === 401) onSignedOut();
        reject(new ApiError(xhr.status, detailOf(parsed, xhr.status)));
      }
    };
    xhr.send(form);
  });
}
