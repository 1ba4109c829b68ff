import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { decisionSlot } from './history-cost';
import { quantile } from './latency';

/**
 * s13: what one store operation costs the process that makes it, in the MongoDB Node driver
 * against the stack's store. A check makes three (the token read, the device read, the device
 * write: docs/architecture.md, "A device check, hop by hop"), so this is the floor under the
 * check's CPU in our processes that fewer gRPC hops cannot lower. Each way of making an operation
 * is measured side by side, in rounds that alternate, one operation at a time and 16 at a time.
 */

/** Documents shaped like a device before change 13 of docs/performance.md (its 20 history slots included), so the driver moves sizes a check of that layout moved. */
const DOCUMENTS = 2_000;
const IN_FLIGHT = 16;

export interface OperationCost {
  operations: number;
  /** This process's CPU (user and system) per operation, the median of the rounds. */
  cpuMsPerOperation: number;
  rounds: number[];
}

type Operation = (index: number) => Promise<unknown>;

export async function measureDriverCost(mongodbUri: string, options: { smoke: boolean; log: (message: string) => void }) {
  const client = await MongoClient.connect(mongodbUri);
  const db = client.db(`ota_bench_driver_${randomUUID().slice(0, 8)}`);
  try {
    const devices = db.collection<{ _id: string }>('devices');
    await devices.insertMany(Array.from({ length: DOCUMENTS }, (_, index) => deviceDoc(index)));
    const id = (index: number) => `device-${index % DOCUMENTS}`;
    const operations: Record<string, Operation> = {
      findOne: (index) => devices.findOne({ _id: id(index) }),
      findCommand: (index) => findByCommand(db, 'devices', id(index)),
      updateOne: (index) => devices.updateOne({ _id: id(index) }, { $set: { last_seen: new Date() }, $inc: { check_count: 1 } }),
    };
    const perRound = options.smoke ? 50 : 1_000;
    const rounds = options.smoke ? 1 : 3;
    const result: Record<string, { oneAtATime: OperationCost; inFlight16: OperationCost }> = {};
    for (const [name, operation] of Object.entries(operations)) {
      // Warm the connection pool and the JIT before anything is measured.
      await run(operation, perRound / 5, 1);
      result[name] = { oneAtATime: { operations: 0, cpuMsPerOperation: 0, rounds: [] }, inFlight16: { operations: 0, cpuMsPerOperation: 0, rounds: [] } };
    }
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, operation] of Object.entries(operations)) {
        result[name]!.oneAtATime.rounds.push(await run(operation, perRound, 1));
        result[name]!.inFlight16.rounds.push(await run(operation, perRound, IN_FLIGHT));
      }
    }
    for (const [name, costs] of Object.entries(result)) {
      for (const cost of [costs.oneAtATime, costs.inFlight16]) {
        cost.operations = perRound * rounds;
        cost.cpuMsPerOperation = quantile([...cost.rounds].sort((a, b) => a - b), 0.5);
      }
      options.log(`  ${name}: ${costs.oneAtATime.cpuMsPerOperation} ms CPU per operation one at a time, ${costs.inFlight16.cpuMsPerOperation} with ${IN_FLIGHT} in flight`);
    }
    return { documents: DOCUMENTS, inFlight: IN_FLIGHT, operations: result };
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
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
