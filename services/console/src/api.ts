// The console's only way to the service: the public developer API, on this origin, with the
// session cookie. Every mutating call carries the session's CSRF token; every failure becomes an
// ApiError holding the API's own `detail`, which the pages show as they got it.

import createClient from 'openapi-fetch';
import type { paths } from '../generated/api';

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

/** Every JSON call of the console: typed by the paths of the gateway's own OpenAPI document. */
export const api = createClient<paths>({
  headers: { accept: 'application/json' },
  credentials: 'same-origin',
  // Read at call time (not at load), and a connection that fails becomes the API's kind of error.
  fetch: async (request) => {
    try {
      return await globalThis.fetch(request);
    } catch {
      throw new ApiError(0, 'the service cannot be reached; check the connection and try again');
    }
  },
});

api.use({
  onRequest({ request }) {
    if (request.method !== 'GET') request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && new URL(request.url).pathname !== `${API}/session/`) onSignedOut();
    return response;
  },
});

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** A call's body, or an ApiError holding the API's `detail`. */
export async function answer<T>(call: Promise<Answer<T>>): Promise<T> {
  return (await answerWithHeaders(call)).body;
}

/** `answer`, with the answer's headers (a device page's `X-Total-Count`). */
export async function answerWithHeaders<T>(call: Promise<Answer<T>>): Promise<{ body: T; headers: Headers }> {
  let result: Answer<T>;
  try {
    result = await call;
  } catch (failure) {
    if (failure instanceof ApiError) throw failure;
    throw new ApiError(0, 'the service answered with a body that is not JSON');
  }
  const { data, error, response } = result;
  if (!response.ok) {
    const body = typeof error === 'string' ? { detail: error.slice(0, 200) || undefined } : error;
    throw new ApiError(response.status, detailOf(body, response.status));
  }
  return { body: data as T, headers: response.headers };
}

type UploadedArtifact = paths['/api/v1/projects/{id}/artifacts/']['post']['responses'][201]['content']['application/json'];

/**
 * A multipart upload with progress: fetch cannot report upload progress, XMLHttpRequest can.
 * `onProgress` gets the share sent, 0 to 1.
 */
export function uploadArtifact(projectId: string, form: FormData, onProgress: (share: number) => void): Promise<UploadedArtifact> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${API}/projects/${encodeURIComponent(projectId)}/artifacts/`);
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
      if (xhr.status >= 200 && xhr.status < 300) resolve(parsed as UploadedArtifact);
      else {
        if (xhr.status === 401) onSignedOut();
        reject(new ApiError(xhr.status, detailOf(parsed, xhr.status)));
      }
    };
    xhr.send(form);
  });
}
