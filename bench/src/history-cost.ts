import { randomUUID } from 'node:crypto';
import { MongoClient, type Collection } from 'mongodb';
import { quantile } from './latency';
import { usageOf } from './process-usage';

/**
 * s14: what a device document's decision history costs the store on a check's two device
 * operations (the read that leaves the history out, and the write that sets the heartbeat, the
 * outcome and one history slot: docs/architecture.md, "A device check, hop by hop"). The same
 * device is stored three ways, side by side in alternating rounds: its 20 slots as objects (the
 * release before change 12 of docs/performance.md), each slot one string (what registry writes
 * now), and no history at all (the floor). A young fleet has few slots filled, so the rate search
 * of s1 cannot show this: a device that checked 20 times has them all.
 */

const SHAPES = ['objects', 'strings', 'none'] as const;
export type HistoryShape = (typeof SHAPES)[number];
const SLOTS = 20;

/** One decision as a history slot holds it: an object, or the ten fields as one JSON array (services/registry/src/adapters/mongo/check-history.ts). */
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
    const collection = db.collection<Record<string, unknown> & { _id: string }>('devices');
    for (const shape of SHAPES) {
      await collection.insertMany(Array.from({ length: devices }, (_, index) => deviceDoc(`${shape}-${index}`, shape)));
    }
    let checkCount = SLOTS;
    const checkAll = async (shape: HistoryShape) => {
      for (let index = 0; index < devices; index += 1) await check(collection, `${shape}-${index}`, shape, checkCount);
      checkCount += 1;
    };
    // Every document read and written once before anything is measured (the store's caches, the JIT).
    for (const shape of SHAPES) await checkAll(shape);
    const store: Record<HistoryShape, number[]> = { objects: [], strings: [], none: [] };
    const ours: Record<HistoryShape, number[]> = { objects: [], strings: [], none: [] };
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
      options.log(`  history as ${shape}: the store ${shapes[shape].storeCpuMsPerCheck} ms CPU per device read and write (rounds ${store[shape].join(', ')}), the client ${shapes[shape].clientCpuMsPerCheck}`);
    }
    const stringsToObjects = shapes.objects.storeCpuMsPerCheck ? round3(shapes.strings.storeCpuMsPerCheck / shapes.objects.storeCpuMsPerCheck) : null;
    options.log(`  strings against objects: ${stringsToObjects} of the store's CPU`);
    return { devices, slots: SLOTS, shapes, stringsToObjects };
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
}

/** The check's two device operations, as registry makes them (services/registry/src/adapters/mongo/mongo-registry-store.ts). */
async function check(collection: Collection<Record<string, unknown> & { _id: string }>, id: string, shape: HistoryShape, checkCount: number) {
  await collection.findOne({ _id: id }, { projection: { check_history: 0 } });
  const now = new Date();
  const set: Record<string, unknown> = { last_seen: now, last_check_at: now, last_check_status: 'up_to_date', check_count: checkCount + 1 };
  if (shape !== 'none') set[`check_history.s${checkCount % SLOTS}`] = decisionSlot(checkCount, shape);
  await collection.updateOne({ _id: id }, { $set: set });
}

function deviceDoc(id: string, shape: HistoryShape) {
  const doc: Record<string, unknown> & { _id: string } = {
    _id: id,
    project_id: 'bench',
    device_id: id,
    channel_id: 'default',
    group_ids: ['g1'],
    active: true,
    token_required: false,
    // The fields of registry's device document (services/registry/src/adapters/mongo/models.ts).
    framework: 'esp-idf',
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
    last_seen: new Date(),
    last_check_at: new Date(),
    last_check_status: 'up_to_date',
    metadata: {},
    place: 1,
    check_count: SLOTS,
    created_at: new Date(),
  };
  if (shape !== 'none') doc.check_history = Object.fromEntries(Array.from({ length: SLOTS }, (_, slot) => [`s${slot}`, decisionSlot(slot + 1, shape)]));
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
