import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { recordIssuedTokens } from './issued-tokens';
import { OpenApiCheck } from './openapi-check';
import { testStack } from './stack-env';

let openApiCheck: Promise<OpenApiCheck> | undefined;

/** The gateway's OpenAPI document, fetched once per test file. */
function openApi(): Promise<OpenApiCheck> {
  openApiCheck ??= fetch(`${testStack().gatewayUrl}/api/v1/openapi.json`)
    .then((response) => response.json())
    .then((document) => new OpenApiCheck(document as never));
  return openApiCheck;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  body?: FormData | string | Buffer;
  headers?: Record<string, string>;
}

/** Calls the real gateway over HTTP and parses JSON answers. */
export async function api<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const url = path.startsWith('http') ? path : `${testStack().gatewayUrl}${path}`;
  const response = await fetch(url, { method, headers, body: body as never });
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  let parsed: unknown = text;
  if (contentType.includes('application/json') && text) parsed = JSON.parse(text);
  (await openApi()).check(method, url, response.status, contentType, parsed);
  recordIssuedTokens(testStack().issuedTokensFile, parsed);
  return { status: response.status, headers: response.headers, body: parsed as T };
}

export interface CreatedUser {
  user_id: string;
  email: string;
  is_staff: boolean;
  token: string;
}

const rootDir = join(__dirname, '..', '..', '..');

/** Runs the real admin command against the test stack's database. */
export function adminCommand(args: string[]): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [join(rootDir, 'services', 'gateway', 'dist', 'admin', 'cli.js'), ...args], {
    env: { ...testStack().gatewayEnv, PATH: process.env.PATH },
    encoding: 'utf8',
  });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

export function createUser(options: { staff?: boolean; maxDevices?: number; maxUploadsPerMonth?: number } = {}): CreatedUser {
  const args = ['create-user', '--email', `user-${randomUUID()}@example.com`];
  if (options.staff) args.push('--staff');
  if (options.maxDevices !== undefined) args.push('--max-devices', String(options.maxDevices));
  if (options.maxUploadsPerMonth !== undefined) args.push('--max-uploads-per-month', String(options.maxUploadsPerMonth));
  const result = adminCommand(args);
  if (result.status !== 0) throw new Error(`admin create-user failed: ${result.stderr}`);
  const user = JSON.parse(result.stdout) as CreatedUser;
  recordIssuedTokens(testStack().issuedTokensFile, user);
  return user;
}

/** A multipart body with the manifest first, then the binary, then any other fields. */
export function uploadForm(manifest: unknown, binary: Buffer, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  form.append('manifest', typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
  form.append('binary', new Blob([binary]), 'firmware.bin');
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}
