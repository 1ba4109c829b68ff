import { randomUUID } from 'node:crypto';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { MongoIdempotencyStore } from '../src/adapters/mongo/mongo-idempotency-store';
import { registerGatewayModels } from '../src/adapters/mongo/models';

// The gateway's idempotency-key store alone, against the run's real MongoDB-protocol server
// (FerretDB here), in a database of its own (docs/api.md, "Retrying an upload"): one claim per key
// among racing requests, the answer kept for the repeats, a failed request's key given back, and
// abandoned claims and expired answers taken over.

let mongo: Connection;
let store: MongoIdempotencyStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, seconds));
const answer = { fingerprint: 'f1', status: 201, body: { id: 'a1' } };

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_idempotency_${randomUUID().slice(0, 8)}` });
  const models = registerGatewayModels(mongo);
  await ensureIndexes(mongo);
  store = new MongoIdempotencyStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

it('gives one of several racing requests the key, and keeps its answer for the repeats', async () => {
  const scope = `p1/upload/${randomUUID()}`;
  const claims = await Promise.all(Array.from({ length: 8 }, () => store.claim(scope, at(0), at(3600), at(-60))));
  expect(claims.filter(Boolean)).toHaveLength(1);
  expect(await store.find(scope)).toBe('in_progress');
  await store.complete(scope, answer);
  expect(await store.find(scope)).toEqual(answer);
  expect(await store.claim(scope, at(1), at(3601), at(-59))).toBe(false);
  expect(await store.find(`p1/upload/${randomUUID()}`)).toBeNull();
});

it('gives a failed request’s key back, so that its retry runs; an answered key is not given back', async () => {
  const scope = `p1/deployment/${randomUUID()}`;
  expect(await store.claim(scope, at(0), at(3600), at(-60))).toBe(true);
  await store.release(scope);
  expect(await store.find(scope)).toBeNull();
  expect(await store.claim(scope, at(1), at(3601), at(-59))).toBe(true);
  await store.complete(scope, answer);
  await store.release(scope);
  expect(await store.find(scope)).toEqual(answer);
});

it('lets a new request take over a claim abandoned longer than any request runs, and an expired answer', async () => {
  const abandoned = `p1/upload/${randomUUID()}`;
  expect(await store.claim(abandoned, at(0), at(3600), at(-60))).toBe(true);
  // Still within a request's time: held.
  expect(await store.claim(abandoned, at(30), at(3630), at(-30))).toBe(false);
  // Its process stopped: older than the longest a request may take, it is taken over.
  expect(await store.claim(abandoned, at(120), at(3720), at(60))).toBe(true);

  const expired = `p1/upload/${randomUUID()}`;
  expect(await store.claim(expired, at(0), at(10), at(-60))).toBe(true);
  await store.complete(expired, answer);
  expect(await store.claim(expired, at(20), at(3620), at(-40))).toBe(true);
  expect(await store.find(expired)).toBe('in_progress');
});

it('deletes the expired keys and only those', async () => {
  const kept = `p2/upload/${randomUUID()}`;
  const gone = `p2/upload/${randomUUID()}`;
  await store.claim(kept, at(0), at(10_000), at(-60));
  await store.claim(gone, at(0), at(100), at(-60));
  expect(await store.deleteExpired(at(200))).toBeGreaterThanOrEqual(1);
  expect(await store.find(gone)).toBeNull();
  expect(await store.find(kept)).toBe('in_progress');
});
