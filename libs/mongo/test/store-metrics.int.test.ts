import { randomUUID } from 'node:crypto';
import { createServer, connect as connectTcp, type Server, type Socket } from 'node:net';
import type { Connection } from 'mongoose';
import { ServiceMetrics } from '@ota/metrics';
import { testStack } from '@ota/testkit';
import { connectMongo } from '@ota/mongo';

// connectMongo's store metrics (docs/operations.md, "Metrics"), against the run's real
// MongoDB-protocol server: every operation's latency from the driver's pool, always; each command's
// by name only when asked; and a connection lost under a command, cut by a loopback proxy.

const MARKER = `lost_${randomUUID().slice(0, 8)}`;

async function valueOf(metrics: ServiceMetrics, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const families = await metrics.registry.getMetricsAsJSON();
  for (const family of families) {
    for (const sample of family.values) {
      const sampleName = (sample as { metricName?: string }).metricName ?? family.name;
      if (sampleName !== name) continue;
      if (Object.entries(labels).every(([label, value]) => sample.labels[label] === value)) return sample.value;
    }
  }
  return undefined;
}

async function connect(metrics: ServiceMetrics, uri = testStack().mongodbUri, commandMetrics?: boolean): Promise<Connection> {
  return connectMongo({ uri, database: `ota_test_${randomUUID().slice(0, 8)}`, metrics, commandMetrics });
}

/**
 * A TCP proxy on loopback to the store that forwards everything until a client sends bytes holding
 * MARKER (a command on the collection of that name): that connection is then cut both ways, its
 * command unanswered.
 */
async function cuttingProxy(target: URL): Promise<{ uri: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connectTcp(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk: Buffer) => {
      if (!chunk.includes(MARKER)) {
        upstream.write(chunk);
        return;
      }
      client.destroy();
      upstream.destroy();
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    // Reads are not retried here, so that one command is one connection cut.
    uri: `mongodb://127.0.0.1:${port}/?directConnection=true&retryReads=false`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the store metrics of connectMongo', () => {
  const connections: Connection[] = [];
  afterEach(async () => {
    for (const connection of connections.splice(0)) {
      if (connection.readyState === 1) await connection.dropDatabase();
      await connection.close();
    }
  });

  it('time every operation from the pool and leave the per-command events off unless asked', async () => {
    const metrics = new ServiceMetrics('registry');
    const connection = await connect(metrics);
    connections.push(connection);
    const before = (await valueOf(metrics, 'ota_mongodb_operation_duration_seconds_count')) ?? 0;
    const probes = connection.db!.collection('probe');
    await probes.insertOne({ at: new Date() });
    for (let i = 0; i < 5; i++) await probes.findOne({});
    // One check-out and one check-in for each of the six commands: each is timed once.
    expect((await valueOf(metrics, 'ota_mongodb_operation_duration_seconds_count'))! - before).toBe(6);
    expect(await valueOf(metrics, 'ota_mongodb_operation_duration_seconds_sum')).toBeGreaterThan(0);
    expect(await valueOf(metrics, 'ota_mongodb_connections_lost_total')).toBe(0);
    expect(await valueOf(metrics, 'ota_mongodb_command_duration_seconds_count', { command: 'find' })).toBeUndefined();
    expect(connection.getClient().options.monitorCommands).toBe(false);
  });

  it('time each of many concurrent commands once: they hold different connections', async () => {
    const metrics = new ServiceMetrics('registry');
    const connection = await connect(metrics);
    connections.push(connection);
    const probes = connection.db!.collection('probe');
    await probes.insertOne({ at: new Date() });
    const before = (await valueOf(metrics, 'ota_mongodb_operation_duration_seconds_count'))!;
    const connectionsUsed = new Set<number | string>();
    connection.getClient().on('connectionCheckedOut', (event) => connectionsUsed.add(event.connectionId));
    await Promise.all(Array.from({ length: 40 }, () => probes.findOne({})));
    // Several connections were out at once: a timing kept per server rather than per connection
    // would lose some of these.
    expect(connectionsUsed.size).toBeGreaterThan(1);
    expect((await valueOf(metrics, 'ota_mongodb_operation_duration_seconds_count'))! - before).toBe(40);
  });

  it('measure each command by name with MONGODB_COMMAND_METRICS on', async () => {
    const metrics = new ServiceMetrics('registry');
    const connection = await connect(metrics, undefined, true);
    connections.push(connection);
    const probes = connection.db!.collection('probe');
    for (let i = 0; i < 3; i++) await probes.findOne({});
    expect(await valueOf(metrics, 'ota_mongodb_command_duration_seconds_count', { command: 'find' })).toBe(3);
    expect(await valueOf(metrics, 'ota_mongodb_command_failures_total', { command: 'find' })).toBe(0);
    expect(await valueOf(metrics, 'ota_mongodb_operation_duration_seconds_count')).toBeGreaterThanOrEqual(3);
  });

  it('count a connection lost under a command, and time the failed command', async () => {
    const proxy = await cuttingProxy(new URL(testStack().mongodbUri));
    const metrics = new ServiceMetrics('registry');
    const connection = await connect(metrics, proxy.uri);
    try {
      await connection.db!.collection('probe').insertOne({ at: new Date() });
      const before = (await valueOf(metrics, 'ota_mongodb_operation_duration_seconds_count'))!;
      await expect(connection.db!.collection(MARKER).findOne({})).rejects.toThrow();
      expect(await valueOf(metrics, 'ota_mongodb_connections_lost_total')).toBe(1);
      expect(await valueOf(metrics, 'ota_mongodb_operation_duration_seconds_count')).toBe(before + 1);
      // The driver finds the server again through the proxy: the next command works.
      expect(await connection.db!.collection('probe').countDocuments()).toBe(1);
    } finally {
      await connection.dropDatabase();
      await connection.close();
      await proxy.close();
    }
  });
});
