import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from 'mongoose';
import { testStack } from '@ota/testkit';
import { connectMongo } from '@ota/mongo';

// connectMongo's pools look for connections to open or close every 10 s, not every 100 ms as the
// driver would (libs/mongo/src/pool-maintenance.ts), against the run's real MongoDB-protocol server:
// the pools open at connect, a pool cleared and made ready again, and the pools of a reopened
// client; a pool given a minimum keeps the driver's looks, which open it. The looks are counted on
// the driver's pools, which only this test and that module reach.

interface Pool {
  ensureMinPoolSize(): void;
  clear(): void;
}

function poolsOf(connection: Connection): Pool[] {
  const topology = connection.getClient().topology as unknown as { s: { servers: Map<string, { pool: Pool }> } };
  return [...topology.s.servers.values()].map((server) => server.pool);
}

/** How many times the pools of `connection` look within `ms`. */
async function looksWithin(connection: Connection, ms: number): Promise<number> {
  let looks = 0;
  const pools = poolsOf(connection);
  expect(pools.length).toBeGreaterThan(0);
  for (const pool of pools) {
    const look = pool.ensureMinPoolSize;
    pool.ensureMinPoolSize = function (this: Pool) {
      looks += 1;
      return look.call(this);
    };
  }
  await sleep(ms);
  for (const pool of pools) delete (pool as Partial<Pool>).ensureMinPoolSize;
  return looks;
}

describe('the pools of connectMongo', () => {
  let connection: Connection;
  beforeEach(async () => {
    connection = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_${randomUUID().slice(0, 8)}`, heartbeatFrequencyMS: 500 });
  });
  afterEach(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  // The driver's own 100 ms would make about 20 looks in 2 s. One look may already be due when
  // the counting starts; the next is 10 s after it.
  it('look once in 10 s from the start', async () => {
    expect(await looksWithin(connection, 2_000)).toBeLessThanOrEqual(1);
    await connection.db!.collection('probe').insertOne({ _id: 'after' } as never);
  });

  it('look once in 10 s after a pool is cleared and made ready again', async () => {
    const client = connection.getClient();
    const readyAgain = once(client, 'connectionPoolReady');
    for (const pool of poolsOf(connection)) pool.clear();
    await readyAgain;
    expect(await looksWithin(connection, 2_000)).toBeLessThanOrEqual(1);
    await connection.db!.collection('probe').insertOne({ _id: 'after-clear' } as never);
  });

  it('keep the driver\'s looks on a client whose pools keep a minimum, and open it', async () => {
    const minimum = await connectMongo({ uri: `${testStack().mongodbUri}${testStack().mongodbUri.includes('?') ? '&' : '?'}minPoolSize=3`, database: `ota_test_${randomUUID().slice(0, 8)}` });
    try {
      expect(await looksWithin(minimum, 2_000)).toBeGreaterThanOrEqual(5);
      const pools = poolsOf(minimum) as unknown as Array<{ totalConnectionCount: number }>;
      expect(pools.reduce((sum, pool) => sum + pool.totalConnectionCount, 0)).toBeGreaterThanOrEqual(3);
    } finally {
      await minimum.close();
    }
  });

  it('look once in 10 s on the pools of a reopened client, which still serve', async () => {
    const client = connection.getClient();
    await client.close();
    await client.connect();
    expect(await looksWithin(connection, 2_000)).toBeLessThanOrEqual(1);
    await connection.db!.collection('probe').insertOne({ _id: 'after-reopen' } as never);
    expect(await connection.db!.collection('probe').countDocuments()).toBe(1);
  });
});
