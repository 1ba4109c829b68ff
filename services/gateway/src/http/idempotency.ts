import { createHash } from 'node:crypto';
import { conflict } from '@ota/errors';
import type { Context } from 'koa';
import { ValidationFailed } from './errors';
import { receiveUpload } from './multipart';

// Idempotency-Key on uploads and releases (docs/api.md, "Retrying an upload"), with the semantics of
// the IETF draft as Stripe uses them: the first request with a key runs and its answer is kept; a
// repeat with the same key and the same request gets that answer and creates nothing; the same key
// with another request is refused. Requests with the same key at once wait for the first.

/** What a key's first request answered, and the fingerprint of that request. */
export interface StoredAnswer {
  fingerprint: string;
  status: number;
  body: unknown;
}

/** The gateway's store of keys; `adapters/mongo` implements it. */
export interface IdempotencyStore {
  /** Claims the key for a request now running; false when it is held (running or answered). */
  claim(scope: string, now: Date, expiresAt: Date, abandonedBefore: Date): Promise<boolean>;
  find(scope: string): Promise<StoredAnswer | 'in_progress' | null>;
  complete(scope: string, answer: StoredAnswer): Promise<void>;
  /** Gives the key up after its request failed, so that a retry runs it again. */
  release(scope: string): Promise<void>;
  deleteExpired(now: Date): Promise<number>;
}

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const KEY = /^[\x21-\x7e]{1,255}$/;
const POLL_MS = 100;

/** The request's key, or undefined without one; a malformed key is 422. */
export function idempotencyKeyOf(ctx: Context): string | undefined {
  const key = ctx.get(IDEMPOTENCY_HEADER);
  if (!key) return undefined;
  if (!KEY.test(key)) throw new ValidationFailed([{ loc: ['header', IDEMPOTENCY_HEADER], msg: 'must be 1 to 255 visible ASCII characters', type: 'value_error' }]);
  return key;
}

/** The fingerprint of an upload: its manifest, its binary's SHA-256, and its other fields. */
export function uploadFingerprint(manifest: string, binarySha256: string, fields: Map<string, string>): string {
  const rest = [...fields].filter(([name]) => name !== 'manifest').sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify({ manifest, binary: binarySha256, rest })).digest('hex');
}

/** The fingerprint of a JSON body: its SHA-256 with keys in order, so key order does not matter. */
export function jsonFingerprint(body: unknown): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
        : value;
  return createHash('sha256').update(JSON.stringify(canonical(body))).digest('hex');
}

/** The header's parameter, as the OpenAPI document shows it on each operation that takes it. */
export const IDEMPOTENCY_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  description:
    'Makes a retry safe: a repeat with the same key and the same request answers what the first answered, with `Idempotent-Replayed: true`, and creates nothing; the same key with another request is 422; a repeat while the first still runs waits for it. Kept for `IDEMPOTENCY_KEY_TTL_SECONDS` (default 24 h), per project and operation.',
};

/** Passes the binary through while hashing it; `digest()` is its SHA-256 once it has been read. */
export function hashingStream(binary: AsyncIterable<Buffer>): { stream: AsyncIterable<Buffer>; digest: () => string } {
  const hash = createHash('sha256');
  let digest = '';
  async function* stream() {
    for await (const chunk of binary) {
      hash.update(chunk);
      yield chunk;
    }
    digest = hash.digest('hex');
  }
  return { stream: stream(), digest: () => digest };
}

/** Reads a repeated upload without storing it, for its fingerprint. */
export function fingerprintOfUpload(ctx: Context, manifestLimitBytes: number): Promise<string> {
  return receiveUpload(ctx, manifestLimitBytes, async ({ manifest, binary, complete }) => {
    const hashed = hashingStream(binary);
    for await (const chunk of hashed.stream) void chunk;
    return uploadFingerprint(manifest, hashed.digest(), await complete);
  });
}

/**
 * Answers with `run`, once per Idempotency-Key when the request has one: `scope` names the project
 * and operation, `fingerprintOfRepeat` reads a repeat for comparison.
 */
export async function answerOncePerKey(
  ctx: Context,
  scope: string,
  options: IdempotencyOptions,
  run: () => Promise<StoredAnswer>,
  fingerprintOfRepeat: () => Promise<string>,
): Promise<void> {
  const key = idempotencyKeyOf(ctx);
  if (key === undefined) {
    const answer = await run();
    ctx.status = answer.status;
    ctx.body = answer.body;
    return;
  }
  await answerOnce(ctx, `${scope}:${key}`, options, run, fingerprintOfRepeat);
}

export interface IdempotencyOptions {
  store: IdempotencyStore;
  ttlSeconds: number;
  /** Longest a request may run: a claim older than this was abandoned, and a waiter stops waiting. */
  requestTimeoutMs: number;
  now?: () => Date;
}

/**
 * Runs `first` once per key: it answers the request and says its fingerprint. A repeat waits while
 * the first runs, then gets its answer if `fingerprintOfRepeat` matches (422 otherwise). A failed
 * first request keeps nothing: the repeat runs as a first.
 */
export async function answerOnce(
  ctx: Context,
  scope: string,
  options: IdempotencyOptions,
  first: () => Promise<StoredAnswer>,
  fingerprintOfRepeat: () => Promise<string>,
): Promise<void> {
  const now = options.now ?? (() => new Date());
  const giveUpAt = Date.now() + options.requestTimeoutMs;
  for (;;) {
    const at = now();
    if (await options.store.claim(scope, at, new Date(at.getTime() + options.ttlSeconds * 1000), new Date(at.getTime() - options.requestTimeoutMs))) {
      let answer: StoredAnswer;
      try {
        answer = await first();
      } catch (error) {
        await options.store.release(scope);
        throw error;
      }
      await options.store.complete(scope, answer);
      ctx.status = answer.status;
      ctx.body = answer.body;
      return;
    }
    const held = await options.store.find(scope);
    if (held === null) continue;
    if (held === 'in_progress') {
      if (Date.now() > giveUpAt) throw conflict(`a request with this ${IDEMPOTENCY_HEADER} is still running; retry it later`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      continue;
    }
    if ((await fingerprintOfRepeat()) !== held.fingerprint) {
      throw new ValidationFailed([{ loc: ['header', IDEMPOTENCY_HEADER], msg: 'this key was used with a different request (another build, manifest or field); use a new key', type: 'value_error' }]);
    }
    ctx.set('Idempotent-Replayed', 'true');
    ctx.status = held.status;
    ctx.body = held.body;
    return;
  }
}
