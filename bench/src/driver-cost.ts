import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { decisionSlot } from './history-cost';
import { quantile } from './latency';

/**
 * s13: what one store operation costs the process that makes it, in the MongoDB Node driver
 * against the stack's store. A check makes three (the token read, the device read, the device
 * write: docs/architecture.md, "A device check, hop by hop"), so this is the floor under the
 * check's CPU in our processes that fewer gRPC hops cannot lower. Each way of making an operation
 * is measured side by side, in rounds that alternate, one operation at a time and 16 at a time;
 * some again on a client that reports every command, to price our services' per-command metrics.
 */

/** Documents shaped like a device before change 13 of docs/performance.md (its 20 history slots included), so the driver moves sizes a check of that layout moved. */
const DOCUMENTS = 2_000;
const IN_FLIGHT = 16;
/** A bucket read answers DOCUMENTS / BUCKETS memberships, about what a finest page bucket of a million-device project holds (docs/performance.md, "A million devices in one project"). */
const BUCKETS = 8;

export interface OperationCost {
  operations: number;
  /** This process's CPU (user and system) per operation, the median of the rounds. */
  cpuMsPerOperation: number;
  rounds: number[];
}

type Operation = (index: number) => Promise<unknown>;

export async function measureDriverCost(mongodbUri: string, options: { smoke: boolean; log: (message: string) => void }) {
  const client = await MongoClient.connect(mongodbUri);
  const clients = [client];
  const db = client.db(`ota_bench_driver_${randomUUID().slice(0, 8)}`);
  try {
    const devices = db.collection<{ _id: string }>('devices');
    await devices.insertMany(Array.from({ length: DOCUMENTS }, (_, index) => deviceDoc(index)));
    // Small documents, 250 to a bucket: a page bucket's memberships, as a device list reads them.
    const memberships = db.collection<{ _id: string }>('memberships');
    await memberships.insertMany(Array.from({ length: DOCUMENTS }, (_, index) => ({ _id: `membership-${index}`, device_id: `device-${index}`, group_id: `group-${index % 7}`, bucket: index % BUCKETS })));
    await memberships.createIndex({ bucket: 1 });
    const id = (index: number) => `device-${index % DOCUMENTS}`;
    const monitored = await connectMonitored(mongodbUri);
    clients.push(monitored);
    const monitoredDevices = monitored.db(db.databaseName).collection<{ _id: string }>('devices');
    const monitoredMemberships = monitored.db(db.databaseName).collection<{ _id: string }>('memberships');
    const bucketOf = (index: number) => ({ bucket: index % BUCKETS });
    const operations: Record<string, Operation> = {
      findOne: (index) => devices.findOne({ _id: id(index) }),
      findCommand: (index) => findByCommand(db, 'devices', id(index)),
      updateOne: (index) => devices.updateOne({ _id: id(index) }, { $set: { last_seen: new Date() }, $inc: { check_count: 1 } }),
      findOneAndUpdate: (index) => devices.findOneAndUpdate({ _id: id(index) }, { $set: { last_seen: new Date() } }, { returnDocument: 'before' }),
      bucketRead: (index) => memberships.find(bucketOf(index)).toArray(),
      'bucketRead in one batch': (index) => memberships.find(bucketOf(index), { batchSize: 10_000 }).toArray(),
      'bucketRead as a command': (index) => findAllByCommand(db, 'memberships', bucketOf(index)),
      'findOne, commands monitored': (index) => monitoredDevices.findOne({ _id: id(index) }),
      'findOneAndUpdate, commands monitored': (index) => monitoredDevices.findOneAndUpdate({ _id: id(index) }, { $set: { last_seen: new Date() } }, { returnDocument: 'before' }),
      'bucketRead, commands monitored': (index) => monitoredMemberships.find(bucketOf(index)).toArray(),
      // A command's answer is decoded once, for the event and the caller; a cursor's twice.
      'bucketRead as a command, commands monitored': (index) => findAllByCommand(monitored.db(db.databaseName), 'memberships', bucketOf(index)),
    };
    const perRound = options.smoke ? 50 : 1_000;
    const rounds = options.smoke ? 1 : 3;
    // A bucket read answers 250 documents: a tenth as many make as much work.
    const countOf = (name: string) => (name.startsWith('bucketRead') ? perRound / 10 : perRound);
    const result: Record<string, { oneAtATime: OperationCost; inFlight16: OperationCost }> = {};
    for (const [name, operation] of Object.entries(operations)) {
      // Warm the connection pool and the JIT before anything is measured.
      await run(operation, perRound / 5, 1);
      result[name] = { oneAtATime: { operations: 0, cpuMsPerOperation: 0, rounds: [] }, inFlight16: { operations: 0, cpuMsPerOperation: 0, rounds: [] } };
    }
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, operation] of Object.entries(operations)) {
        result[name]!.oneAtATime.rounds.push(await run(operation, countOf(name), 1));
        result[name]!.inFlight16.rounds.push(await run(operation, countOf(name), IN_FLIGHT));
      }
    }
    for (const [name, costs] of Object.entries(result)) {
      for (const cost of [costs.oneAtATime, costs.inFlight16]) {
        cost.operations = countOf(name) * rounds;
        cost.cpuMsPerOperation = quantile([...cost.rounds].sort((a, b) => a - b), 0.5);
      }
      options.log(`  ${name}: ${costs.oneAtATime.cpuMsPerOperation} ms CPU per operation one at a time, ${costs.inFlight16.cpuMsPerOperation} with ${IN_FLIGHT} in flight`);
    }
    return { documents: DOCUMENTS, inFlight: IN_FLIGHT, operations: result };
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await Promise.all(clients.map((each) => each.close()));
  }
}

/** Runs `count` operations, `inFlight` at a time; this process's CPU per operation, in ms. */
async function run(operation: Operation, count: number, inFlight: number): Promise<number> {
  const before = process.cpuUsage();
  let next = 0;
  const worker = async () => {
    while (next < count) await operation(next++);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const used = process.cpuUsage(before);
  return Math.round(((used.user + used.system) / 1000 / count) * 1000) / 1000;
}

/**
 * A client that reports every command, as our services' clients do for their per-command metrics
 * (libs/mongo's MONGODB_COMMAND_METRICS): each answer's duration is kept by command name, as a
 * histogram's observation would keep it.
 */
async function connectMonitored(mongodbUri: string): Promise<MongoClient> {
  const client = await MongoClient.connect(mongodbUri, { monitorCommands: true });
  const durations = new Map<string, number>();
  client.on('commandSucceeded', (event) => {
    durations.set(event.commandName, (durations.get(event.commandName) ?? 0) + event.duration);
  });
  return client;
}

/** The same primary-key read as a `find` command, without the driver's cursor. */
async function findByCommand(db: Db, collection: string, id: string): Promise<unknown> {
  const answer = await db.command({ find: collection, filter: { _id: id }, limit: 1, singleBatch: true });
  return (answer as { cursor: { firstBatch: unknown[] } }).cursor.firstBatch[0];
}

function deviceDoc(index: number) {
  // Each slot one string, as registry stores a decision.
  const slots = Object.fromEntries(Array.from({ length: 20 }, (_, slot) => [`s${slot}`, decisionSlot(slot + 1, 'strings')]));
  return {
    _id: `device-${index}`,
    project_id: 'bench',
    device_id: `unit-${index}`,
    channel_id: 'default',
    group_ids: ['g1', 'g2'],
    active: true,
    hardware: { framework: 'esp-idf', chip: 'esp32s3', board: 'board-a', flash_size_mb: 8 },
    last_seen: new Date(),
    check_count: 0,
    check_history: slots,
  };
}

/** A bucket read as one `find` command whose first batch is every match (as many as fit an answer). */
async function findAllByCommand(db: Db, collection: string, filter: Record<string, unknown>): Promise<unknown[]> {
  const answer = await db.command({ find: collection, filter, batchSize: 10_000, singleBatch: true });
  return (answer as { cursor: { firstBatch: unknown[] } }).cursor.firstBatch;
}
