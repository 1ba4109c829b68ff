import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from 'mongoose';
import { testStack, eventually } from '@ota/testkit';
import { connectMongo } from '@ota/mongo';

// connectMongo's supervision of the driver, against the run's real MongoDB-protocol server
// (FerretDB here). A stalled driver is made the way the fault suite saw one: its monitor no longer
// checks the server, and its pool stays cleared, so every operation fails until something reopens
// the client.

// The driver checks every 500 ms and gives a check 1 s: stalled after 3 s without a check.
const HEARTBEAT_FREQUENCY_MS = 500;
const CONNECT_TIMEOUT_MS = 1_000;
const STALLED_AFTER_MS = 2 * (HEARTBEAT_FREQUENCY_MS + CONNECT_TIMEOUT_MS);

interface Logged {
  level: string;
  message: string;
}

async function connect(logged: Logged[]): Promise<Connection> {
  const log = (level: string) => (_fields: object, message: string) => logged.push({ level, message });
  return connectMongo({
    uri: testStack().mongodbUri,
    database: `ota_test_${randomUUID().slice(0, 8)}`,
    logger: { error: log('error'), warn: log('warn'), info: log('info') },
    heartbeatFrequencyMS: HEARTBEAT_FREQUENCY_MS,
    connectTimeoutMS: CONNECT_TIMEOUT_MS,
  });
}

/** Stops the driver's monitor and clears its pool: the driver's internals, reached only here. */
function stall(connection: Connection): void {
  const topology = connection.getClient().topology as unknown as { s: { servers: Map<string, { monitor: { monitorId?: { stop(): void } }; pool: { clear(): void } }> } };
  for (const server of topology.s.servers.values()) {
    server.monitor.monitorId!.stop();
    server.pool.clear();
  }
}

const insertWorks = (connection: Connection) =>
  connection.db!.collection('probe')
    .insertOne({ at: new Date() })
    .then(
      () => true,
      () => false,
    );

describe('a stalled MongoDB driver', () => {
  let connection: Connection;
  afterEach(async () => {
    if (connection.readyState !== 1) return;
    await connection.dropDatabase();
    await connection.close();
  });

  it('is reopened: operations that failed work again, and the reopening is logged', async () => {
    const logged: Logged[] = [];
    connection = await connect(logged);
    expect(await insertWorks(connection)).toBe(true);
    stall(connection);
    // Stalled for real: with no check and a cleared pool, an operation fails.
    expect(await insertWorks(connection)).toBe(false);
    expect(await eventually(() => insertWorks(connection), Boolean, 10 * STALLED_AFTER_MS)).toBe(true);
    expect(logged).toContainEqual({ level: 'error', message: 'MongoDB driver stopped checking the server; reopening its client' });
    expect(logged).toContainEqual({ level: 'info', message: 'MongoDB client reopened' });
    // Still supervised after the reopening: a second stall is mended too.
    stall(connection);
    expect(await insertWorks(connection)).toBe(false);
    expect(await eventually(() => insertWorks(connection), Boolean, 10 * STALLED_AFTER_MS)).toBe(true);
    expect(logged.filter((entry) => entry.message === 'MongoDB client reopened')).toHaveLength(2);
  });

  it('is told apart from a driver that checks: a healthy client is never reopened', async () => {
    const logged: Logged[] = [];
    connection = await connect(logged);
    await sleep(2 * STALLED_AFTER_MS);
    expect(await insertWorks(connection)).toBe(true);
    expect(logged.filter((entry) => entry.level === 'error')).toEqual([]);
  });

  it('ends with the connection: a client the process closed is not reopened', async () => {
    const logged: Logged[] = [];
    connection = await connect(logged);
    await connection.close();
    await sleep(2 * STALLED_AFTER_MS);
    expect(logged.filter((entry) => entry.level === 'error')).toEqual([]);
    expect(connection.readyState).toBe(0);
  });
});
