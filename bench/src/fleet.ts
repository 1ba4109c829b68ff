import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { Outcome } from './open-loop';

/** A developer API call's answer other than a success. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The answer's Retry-After, NaN without one. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** The gateway as the benchmark sees it: an HTTP pool and the API calls that set a fleet up. */
export class Gateway {
  readonly pool: Pool;

  constructor(readonly url: string) {
    // Enough connections that the server, not this client, decides what waits: a fleet's devices
    // each have their own connection, and a wake storm must reach the gateway's load shedding.
    this.pool = new Pool(url, { connections: 2048, pipelining: 1 });
  }

  /** A developer API call; `giveUpMs` aborts it when no answer came by then. */
  async api(method: string, path: string, token: string, body?: unknown, giveUpMs?: number): Promise<any> {
    const isForm = body instanceof FormData;
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body && !isForm ? { 'content-type': 'application/json' } : {}) },
      body: isForm ? body : body === undefined ? undefined : JSON.stringify(body),
      signal: giveUpMs ? AbortSignal.timeout(giveUpMs) : undefined,
    });
    const text = await response.text();
    if (response.status >= 300) throw new ApiError(`${method} ${path}: ${response.status} ${text}`, response.status, Number(response.headers.get('retry-after') ?? Number.NaN));
    return text ? JSON.parse(text) : undefined;
  }

  /**
   * A developer API call that waits out the token's rate limit (429 with Retry-After) and tries
   * again: for work whose answers come faster than RATE_LIMIT_DEVELOPER_PER_SECOND and whose
   * timing is not measured.
   */
  async apiWithinRateLimit(method: string, path: string, token: string, body?: unknown): Promise<any> {
    for (;;) {
      try {
        return await this.api(method, path, token, body);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 429 || !(error.retryAfterSeconds >= 0)) throw error;
        await new Promise((resolve) => setTimeout(resolve, error.retryAfterSeconds * 1000));
      }
    }
  }

  /** One device API call over the pool; `parse` reads the JSON answer when the caller needs it. */
  async post(path: string, token: string, body: unknown, parse = false): Promise<Outcome & { body?: any }> {
    const response = await this.pool.request({
      method: 'POST',
      path,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const outcome = { status: response.statusCode, retryAfter: response.headers['retry-after'] !== undefined };
    if (parse) return { ...outcome, body: await response.body.json() };
    await response.body.dump();
    return outcome;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

export interface Fleet {
  userToken: string;
  projectId: string;
  deviceToken: string;
  defaultChannelId: string;
}

/** A user (through the real admin command) with a device cap (0: none) and no upload cap, a project and a device-scope token. */
export async function createFleet(gateway: Gateway, rootDir: string, gatewayEnv: NodeJS.ProcessEnv, name: string, maxDevices = 0): Promise<Fleet> {
  const admin = spawnSync(
    process.execPath,
    [join(rootDir, 'services', 'gateway', 'dist', 'admin', 'cli.js'), 'create-user', '--email', `bench-${randomUUID()}@example.com`, '--max-devices', String(maxDevices), '--max-uploads-per-month', '0'],
    { env: { ...gatewayEnv, PATH: process.env.PATH }, encoding: 'utf8' },
  );
  if (admin.status !== 0) throw new Error(`admin create-user failed: ${admin.stderr}`);
  const userToken = (JSON.parse(admin.stdout) as { token: string }).token;
  const project = await gateway.api('POST', '/api/v1/projects/', userToken, { name });
  const token = await gateway.api('POST', `/api/v1/projects/${project.id}/tokens/`, userToken, { name: 'fleet', scope: 'device' });
  const channels = (await gateway.api('GET', `/api/v1/projects/${project.id}/channels/`, userToken)) as Array<{ id: string; is_default: boolean }>;
  return { userToken, projectId: project.id, deviceToken: token.token, defaultChannelId: channels.find((channel) => channel.is_default)!.id };
}

export const FRAMEWORK = 'esp_idf';
export const CHIP = 'esp32';

/** Uploads a build, creates a deployment of it at `percentage` targeting `channelIds`, and starts it. */
export async function createDeployment(...draft: Parameters<typeof createDraftDeployment>): Promise<{ deploymentId: string; buildNumber: number }> {
  const created = await createDraftDeployment(...draft);
  await startDeployment(draft[0], draft[1], created.deploymentId);
  return created;
}

/** Uploads a build and creates a draft deployment of it at `percentage` targeting `channelIds`. */
export async function createDraftDeployment(
  gateway: Gateway,
  fleet: Fleet,
  manifest: Record<string, unknown>,
  channelIds: string[],
  percentage: number,
  binary: Buffer = randomBuild(4096),
  options: Record<string, unknown> = {},
): Promise<{ deploymentId: string; buildNumber: number }> {
  const form = new FormData();
  form.append('manifest', JSON.stringify({ framework: FRAMEWORK, chip_family: CHIP, ...manifest }));
  form.append('binary', new Blob([binary]), 'firmware.bin');
  const artifact = await gateway.api('POST', `/api/v1/projects/${fleet.projectId}/artifacts/`, fleet.userToken, form);
  const deployment = await gateway.api('POST', `/api/v1/projects/${fleet.projectId}/deployments/`, fleet.userToken, {
    artifact_id: artifact.id,
    target_channel_ids: channelIds,
    rollout_percentage: percentage,
    ...options,
  });
  return { deploymentId: deployment.id, buildNumber: artifact.build_number };
}

export async function startDeployment(gateway: Gateway, fleet: Fleet, deploymentId: string): Promise<void> {
  await gateway.api('POST', `/api/v1/projects/${fleet.projectId}/deployments/${deploymentId}/transition/`, fleet.userToken, { action: 'start', confirm_all: true });
}

/** Runs `count` tasks with `concurrency` at a time (fleet set-up, not measured). */
export async function inParallel(count: number, concurrency: number, task: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/**
 * Random bytes that are not an ESP-IDF image: the service reads a binary whose first byte is 0xE9
 * as one and refuses it when it does not parse (docs/api.md, "The image").
 */
export function randomBuild(size: number): Buffer {
  const bytes = randomBytes(size);
  if (bytes[0] === 0xe9) bytes[0] = 0;
  return bytes;
}
