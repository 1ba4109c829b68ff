import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { quantile } from './latency';
import { usageOf } from './process-usage';

/**
 * s14: what a check's device operations and its decision record cost the store, the check's
 * writes as registry has made them in turn (docs/architecture.md, "A device check, hop by hop"),
 * side by side in alternating rounds on the same FerretDB:
 * - `objects`: a device read, then a write of the heartbeat, the outcome and one of 20 history
 *   slots on the device, each slot an object (before change 12 of docs/performance.md);
 * - `strings`: the same, each slot one string (change 12);
 * - `none`: the same read and write with no history at all (the floor of that layout);
 * - `records`: what registry does now (change 13): one find-and-modify of the device that writes
 *   the heartbeat and returns the device as it was, and one insert of the record into a
 *   collection of its own, which every 20th check trims;
 * - `records-ring`: the alternative to the insert, each device's 20 records as slots
 *   `<device>:<n mod 20>` replaced in place;
 * - `records-ring-unindexed`: `records-ring` with a record collection of no index but `_id`: a
 *   ring needs no trim, and a listing can read its 20 slots by `_id`, so it needs no index by device;
 * - `records-bare-device`: `records` on a device collection with no index but `_id`, which
 *   separates what registry's device indexes cost the store on each device write;
 * - `records-small-device`: `records` on device documents of only the fields a check reads and
 *   writes (with registry's indexes), which separates what the rest of the device's
 *   fields cost, FerretDB v1 rewriting the whole document on each write;
 * - `records-unindexed`: `records` with a record collection of no index but `_id`, which
 *   separates what the records' index by device costs each insert (it does not trim: a trim
 *   without that index would scan every record);
 * - `s0`: the device upsert and decision insert of s0's bare check (collections with no index
 *   but `_id`), the yardstick.
 * Each layout has collections of its own; the device collections carry registry's indexes
 * (services/registry/src/adapters/mongo/models.ts), which FerretDB's PostgreSQL backend, with our
 * GIN mirrors of them, updates on every write of a device document.
 * A young fleet has few slots filled, so the rate search of s1 cannot show the slots' weight: a
 * device that checked 20 times has them all, and these devices start so.
 */

const SHAPES = ['objects', 'strings', 'none', 'records', 'records-ring', 'records-ring-unindexed', 'records-bare-device', 'records-small-device', 'records-unindexed', 's0'] as const;
const RECORD_SHAPES = ['records', 'records-ring', 'records-ring-unindexed', 'records-bare-device', 'records-small-device', 'records-unindexed'] as const;
const RING_SHAPES: readonly HistoryShape[] = ['records-ring', 'records-ring-unindexed'];
const UNINDEXED_RECORDS: readonly HistoryShape[] = ['records-unindexed', 'records-ring-unindexed'];
/** The layouts whose collections carry no index but `_id` on the device side. */
const BARE_DEVICES: readonly HistoryShape[] = ['records-bare-device', 's0'];
export type HistoryShape = (typeof SHAPES)[number];
const SLOTS = 20;
type StoredDoc = Record<string, unknown> & { _id: string };

/** One decision as a history slot holds it: an object, or the ten fields as one JSON array (services/registry/src/adapters/mongo/decision-record-entry.ts). */
export function decisionSlot(seq: number, shape: 'objects' | 'strings') {
  const fields = {
    seq,
    id: randomUUID(),
    created_at: new Date(),
    decision: 'no_update',
    status: 'up_to_date',
    deployment_id: '',
    artifact_build_number: null,
    reported_build_number: 42,
    reported_version: '1.2.3',
    message: 'no active deployment targets this device',
  };
  if (shape === 'objects') return fields;
  return JSON.stringify([fields.seq, fields.id, fields.created_at.getTime(), fields.decision, fields.status, fields.deployment_id, null, 42, fields.reported_version, fields.message]);
}

export interface ShapeCost {
  /** The store's CPU (FerretDB and PostgreSQL, every process of each) per device read and write, the median round. */
  storeCpuMsPerCheck: number;
  /** This process's CPU per read and write (the driver's side). */
  clientCpuMsPerCheck: number;
  rounds: number[];
}

export async function measureHistoryCost(mongodbUri: string, storePids: Record<string, number>, options: { smoke: boolean; log: (message: string) => void }) {
  if (Object.keys(storePids).length === 0) {
    throw new Error('s14 reads the CPU of the store processes, and this stack runs none of its own (it points at a MongoDB-protocol server it did not start)');
  }
  const devices = options.smoke ? 50 : 1_000;
  const rounds = options.smoke ? 1 : 3;
  const client = await MongoClient.connect(mongodbUri);
  const db = client.db(`ota_bench_history_${randomUUID().slice(0, 8)}`);
  try {
    for (const shape of SHAPES) {
      const devicesOfShape = db.collection<StoredDoc>(`devices_${shape}`);
      if (!BARE_DEVICES.includes(shape)) {
        await devicesOfShape.createIndex({ project_id: 1, device_id: 1 }, { unique: true });
        await devicesOfShape.createIndex({ project_id: 1, channel_id: 1 });
      }
      if (shape !== 's0') await devicesOfShape.insertMany(Array.from({ length: devices }, (_, index) => deviceDoc(`${shape}-${index}`, shape, index)));
    }
    // The records layouts start with 20 records per device; each device's count has its own phase, so a
    // twentieth of the devices trim in every round, as in a fleet.
    for (const shape of RECORD_SHAPES) {
      const records = db.collection<StoredDoc>(`records_${shape}`);
      if (!UNINDEXED_RECORDS.includes(shape)) await records.createIndex({ device_id: 1 });
      for (let index = 0; index < devices; index += 1) {
        const id = `${shape}-${index}`;
        const last = SLOTS + (index % SLOTS);
        await records.insertMany(
          Array.from({ length: SLOTS }, (_, back) => {
            const seq = last - back;
            return { _id: RING_SHAPES.includes(shape) ? `${id}:${seq % SLOTS}` : randomUUID(), device_id: id, seq, entry: decisionSlot(seq, 'strings') };
          }),
        );
      }
    }
    // Our FerretDB's GIN mirrors of the new indexes (deploy/ferretdb/gin_mirror.go) appear within a second.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    let checkCount = SLOTS;
    const checkAll = async (shape: HistoryShape) => {
      for (let index = 0; index < devices; index += 1) await check(db, `${shape}-${index}`, shape, checkCount);
      checkCount += 1;
    };
    // Every document read and written once before anything is measured (the store's caches, the JIT).
    for (const shape of SHAPES) await checkAll(shape);
    const store = Object.fromEntries(SHAPES.map((shape) => [shape, [] as number[]])) as Record<HistoryShape, number[]>;
    const ours = Object.fromEntries(SHAPES.map((shape) => [shape, [] as number[]])) as Record<HistoryShape, number[]>;
    for (let round = 0; round < rounds; round += 1) {
      for (const shape of SHAPES) {
        const storeBefore = storeCpuMs(storePids);
        const oursBefore = process.cpuUsage();
        await checkAll(shape);
        const oursUsed = process.cpuUsage(oursBefore);
        store[shape].push(round3((storeCpuMs(storePids) - storeBefore) / devices));
        ours[shape].push(round3((oursUsed.user + oursUsed.system) / 1000 / devices));
      }
    }
    const shapes = Object.fromEntries(
      SHAPES.map((shape) => [shape, { storeCpuMsPerCheck: median(store[shape]), clientCpuMsPerCheck: median(ours[shape]), rounds: store[shape] } satisfies ShapeCost]),
    ) as Record<HistoryShape, ShapeCost>;
    for (const shape of SHAPES) {
      options.log(`  ${shape}: the store ${shapes[shape].storeCpuMsPerCheck} ms CPU per check's device and record writes (rounds ${store[shape].join(', ')}), the client ${shapes[shape].clientCpuMsPerCheck}`);
    }
    const ratio = (shape: HistoryShape, to: HistoryShape) => (shapes[to].storeCpuMsPerCheck ? round3(shapes[shape].storeCpuMsPerCheck / shapes[to].storeCpuMsPerCheck) : null);
    const stringsToObjects = ratio('strings', 'objects');
    const recordsToStrings = ratio('records', 'strings');
    const recordsToS0 = ratio('records', 's0');
    const bareDeviceToS0 = ratio('records-bare-device', 's0');
    const smallDeviceToS0 = ratio('records-small-device', 's0');
    const unindexedToS0 = ratio('records-unindexed', 's0');
    options.log(
      `  strings against objects: ${stringsToObjects} of the store's CPU; records against strings: ${recordsToStrings}; records against s0's: ${recordsToS0}; ` +
        `with no device index: ${bareDeviceToS0}; on a small device: ${smallDeviceToS0}; with no record index: ${unindexedToS0}`,
    );
    return { devices, slots: SLOTS, shapes, stringsToObjects, recordsToStrings, recordsToS0, bareDeviceToS0, smallDeviceToS0, unindexedToS0 };
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
}

/** A check's store writes (and the read before them) in each layout; the outcome is unchanged, as on a settled device. */
async function check(db: Db, id: string, shape: HistoryShape, checkCount: number) {
  const now = new Date();
  const collection = db.collection<StoredDoc>(`devices_${shape}`);
  const heartbeat = { last_seen: now, framework: 'esp-idf', chip_family: 'esp32s3', board_id: 'board-a', current_version_label: '1.2.3', current_hash: 'ab'.repeat(32) };
  if (shape === 's0') {
    // As bench/src/baseline-server.ts.
    await collection.updateOne({ _id: id }, { $set: { last_seen: now, reported: { chip_family: 'esp32s3', build: 42 } } }, { upsert: true });
    await db.collection('decisions_s0').insertOne({ _id: randomUUID() as never, device_id: id, status: 'no_active_deployment', created_at: now });
    return;
  }
  if ((RECORD_SHAPES as readonly HistoryShape[]).includes(shape)) {
    // As services/registry/src/adapters/mongo/mongo-registry-store.ts checks in and records.
    const filter = { _id: id, project_id: 'bench', device_id: id, active: { $ne: false }, token_required: { $ne: true } };
    const before = await collection.findOneAndUpdate(filter as never, { $set: { ...heartbeat, last_check_at: now }, $inc: { check_count: 1 } } as never, { returnDocument: 'before' });
    const seq = (before!.check_count as number) + 1;
    const records = db.collection<StoredDoc>(`records_${shape}`);
    const record = { device_id: id, seq, entry: decisionSlot(seq, 'strings') };
    if (RING_SHAPES.includes(shape)) {
      await records.replaceOne({ _id: `${id}:${seq % SLOTS}` }, record, { upsert: true });
    } else {
      await records.insertOne({ _id: randomUUID(), ...record });
      if (seq % SLOTS === 0 && shape !== 'records-unindexed') await records.deleteMany({ device_id: id, seq: { $lte: seq - SLOTS } });
    }
    return;
  }
  await collection.findOne({ _id: id }, { projection: { check_history: 0 } });
  const set: Record<string, unknown> = { ...heartbeat, last_check_at: now, last_check_status: 'up_to_date', check_count: checkCount + 1 };
  if (shape === 'objects' || shape === 'strings') set[`check_history.s${checkCount % SLOTS}`] = decisionSlot(checkCount, shape);
  await collection.updateOne({ _id: id }, { $set: set });
}

function deviceDoc(id: string, shape: HistoryShape, index: number) {
  // What a check reads (the decision's and the heartbeat rule's fields, the count and the outcome) and writes.
  const checked: StoredDoc = {
    _id: id,
    project_id: 'bench',
    device_id: id,
    channel_id: 'default',
    group_ids: ['g1'],
    active: true,
    token_required: false,
    last_seen: new Date(),
    last_check_at: new Date(),
    last_check_status: 'up_to_date',
    check_count: SLOTS + (index % SLOTS),
    framework: 'esp-idf',
  };
  if (shape === 'records-small-device') return checked;
  const doc: StoredDoc = {
    ...checked,
    // The other fields of registry's device document (services/registry/src/adapters/mongo/models.ts).
    chip_family: 'esp32s3',
    board_id: 'board-a',
    hardware_revision: 'r2',
    partition_profile: 'ota_2',
    nvs_schema_version: 3,
    security_mode: 'secure_boot_v2',
    current_build_number: 42,
    current_version_label: '1.2.3',
    current_hash: 'ab'.repeat(32),
    last_ota_status: 'confirmed',
    last_ota_reason: '',
    last_ota_deployment_id: randomUUID(),
    last_ota_rank: 5,
    metadata: {},
    place: 1,
    created_at: new Date(),
  };
  if (shape === 'objects' || shape === 'strings') doc.check_history = Object.fromEntries(Array.from({ length: SLOTS }, (_, slot) => [`s${slot}`, decisionSlot(slot + 1, shape)]));
  return doc;
}

function storeCpuMs(storePids: Record<string, number>): number {
  return Object.values(usageOf(storePids)).reduce((sum, usage) => sum + usage.cpuMs, 0);
}

function median(values: number[]): number {
  return quantile([...values].sort((a, b) => a - b), 0.5);
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
