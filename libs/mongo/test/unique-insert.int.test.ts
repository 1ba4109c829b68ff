import { randomUUID } from 'node:crypto';
import { MongoClient, type Collection, type CommandSucceededEvent, type Db } from 'mongodb';
import { testStack } from '@ota/testkit';
import { PerKeyQueue, insertWithNextNumber, releasePlace, takePlace, type PlaceDoc } from '@ota/mongo';

// Against the run's real MongoDB-protocol server (FerretDB here), in a database of this test's own.

let client: MongoClient;
let db: Db;

beforeAll(async () => {
  client = await MongoClient.connect(testStack().mongodbUri, { maxPoolSize: 30, monitorCommands: true });
});
beforeEach(() => {
  db = client.db(`ota_test_${randomUUID().slice(0, 8)}`);
});
afterEach(async () => {
  await db.dropDatabase();
});
afterAll(async () => {
  await client.close();
});

/** The documents the server returned to finds (and their getMores) while `work` ran. */
async function documentsReadDuring(work: () => Promise<unknown>): Promise<number> {
  let read = 0;
  const count = (event: CommandSucceededEvent) => {
    const cursor = (event.reply as { cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
    read += (cursor?.firstBatch ?? cursor?.nextBatch ?? []).length;
  };
  client.on('commandSucceeded', count);
  try {
    await work();
  } finally {
    client.off('commandSucceeded', count);
  }
  return read;
}

/** `count` places 1..count of `scope`, written directly as an earlier release of takePlace left them. */
async function seedPlaces(places: Collection<PlaceDoc>, scope: string, count: number): Promise<void> {
  const docs = Array.from({ length: count }, (_, i) => ({ _id: `${scope}#${i + 1}`, scope, place: i + 1 }));
  await places.insertMany(docs);
}

describe('takePlace', () => {
  it('never hands out more than the cap, however many take at once', async () => {
    const places = db.collection<PlaceDoc>('places');
    const taken = await Promise.all(Array.from({ length: 25 }, () => takePlace(places, 'owner-1', 7)));
    const granted = taken.filter((place): place is number => place !== null);
    expect(granted.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(taken.filter((place) => place === null)).toHaveLength(18);
    expect(await places.countDocuments({ scope: 'owner-1' })).toBe(7);
  });

  it('reuses a place that was given back, and keeps scopes apart', async () => {
    const places = db.collection<PlaceDoc>('places');
    for (let i = 0; i < 3; i += 1) await takePlace(places, 'a', 3);
    expect(await takePlace(places, 'a', 3)).toBeNull();
    await releasePlace(places, 'a', 2);
    expect(await takePlace(places, 'a', 3)).toBe(2);
    expect(await takePlace(places, 'a', 3)).toBeNull();
    expect([1, 2, 3]).toContain(await takePlace(places, 'b', 3));
  });

  it('counts without bound when the cap is 0, and those places count against a cap set later', async () => {
    const places = db.collection<PlaceDoc>('places');
    const taken = await Promise.all(Array.from({ length: 12 }, () => takePlace(places, 'free', 0)));
    expect(new Set(taken).size).toBe(12);
    expect(await takePlace(places, 'free', 12)).toBeNull();
    expect(await takePlace(places, 'free', 13)).not.toBeNull();
  });

  it('reads a few documents, not every place held, while the holder is far from its cap', async () => {
    const places = db.collection<PlaceDoc>('places');
    await seedPlaces(places, 'large', 2_000);
    // The first taker reads what is held (places left without a record of their cap) ...
    expect(await documentsReadDuring(() => takePlace(places, 'large', 100_000))).toBeGreaterThanOrEqual(2_000);
    // ... and the next ones try places by insert: each reads only the scope's recorded caps.
    const taken: (number | null)[] = [];
    const read = await documentsReadDuring(async () => {
      for (let i = 0; i < 10; i += 1) taken.push(await takePlace(places, 'large', 100_000));
    });
    expect(read).toBeLessThan(50);
    expect(new Set(taken).size).toBe(10);
    expect(taken.every((place) => place !== null && place > 0 && place <= 100_000)).toBe(true);
    expect(await places.countDocuments({ scope: 'large' })).toBe(2_011);
  });

  it('never hands out more than the cap when the takers try places by insert', async () => {
    const places = db.collection<PlaceDoc>('places');
    await takePlace(places, 'tried', 40);
    const taken = await Promise.all(Array.from({ length: 120 }, () => takePlace(places, 'tried', 40)));
    const granted = taken.filter((place): place is number => place !== null);
    expect(granted).toHaveLength(39);
    expect(new Set(granted).size).toBe(39);
    expect(await places.countDocuments({ scope: 'tried' })).toBe(40);
    expect(await takePlace(places, 'tried', 40)).toBeNull();
  });

  it('counts the places above a lowered cap against it', async () => {
    const places = db.collection<PlaceDoc>('places');
    const held: number[] = [];
    for (let i = 0; i < 40; i += 1) held.push((await takePlace(places, 'lowered', 1_000))!);
    expect(new Set(held).size).toBe(40);
    expect(await takePlace(places, 'lowered', 30)).toBeNull();
    for (const place of held.slice(20)) await releasePlace(places, 'lowered', place);
    // 20 held, most of them above 30: each counts, so 10 more and no more.
    const more: (number | null)[] = [];
    for (let i = 0; i < 15; i += 1) more.push(await takePlace(places, 'lowered', 30));
    const granted = more.filter((place): place is number => place !== null);
    expect(granted).toHaveLength(10);
    expect(granted.every((place) => place <= 30)).toBe(true);
    expect(await places.countDocuments({ scope: 'lowered' })).toBe(30);
  });

  it('tries places by insert again once no place above a lowered cap is held', async () => {
    const places = db.collection<PlaceDoc>('places');
    const held: number[] = [];
    for (let i = 0; i < 40; i += 1) held.push((await takePlace(places, 'lowered', 1_000))!);
    for (const place of held.filter((kept) => kept > 500)) await releasePlace(places, 'lowered', place);
    // This taker reads the places, finds none above 500 and forgets the cap of 1,000 ...
    await takePlace(places, 'lowered', 500);
    // ... so each of the next ones reads only the one cap recorded (a read of the places would
    // return about 20 documents).
    const taken: (number | null)[] = [];
    const read = await documentsReadDuring(async () => {
      for (let i = 0; i < 10; i += 1) taken.push(await takePlace(places, 'lowered', 500));
    });
    expect(read).toBeLessThan(15);
    expect(taken.every((place) => place !== null && place <= 500)).toBe(true);
  });
});

describe('insertWithNextNumber', () => {
  it('numbers concurrent inserts 1..n with no gaps and no repeats, per scope', async () => {
    const items = db.collection<{ _id: string; scope: string; n: number }>('items');
    await items.createIndex({ scope: 1, n: 1 }, { unique: true });
    const numbers = await Promise.all(
      Array.from({ length: 15 }, (_, i) => insertWithNextNumber(items, { scope: i % 3 === 0 ? 'x' : 'y' }, 'n', { _id: randomUUID(), scope: i % 3 === 0 ? 'x' : 'y' })),
    );
    const stored = await items.find({}).toArray();
    const byScope = (scope: string) => stored.filter((item) => item.scope === scope).map((item) => item.n).sort((a, b) => a - b);
    expect(byScope('x')).toEqual([1, 2, 3, 4, 5]);
    expect(byScope('y')).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(numbers).toHaveLength(15);
  });
});

describe('PerKeyQueue against the real server', () => {
  it('keeps every one of 40 concurrent $sets of different fields of one document', async () => {
    const devices = db.collection<{ _id: string } & Record<string, unknown>>('devices');
    const queue = new PerKeyQueue();
    const fields = Array.from({ length: 40 }, (_, i) => `field_${i}`);
    const setAll = (through: (write: () => Promise<unknown>) => Promise<unknown>, id: string) =>
      Promise.all(fields.map((field) => through(() => devices.updateOne({ _id: id }, { $set: { [field]: true } }))));

    await devices.insertOne({ _id: 'queued' });
    await setAll((write) => queue.run('queued', write), 'queued');
    const queued = await devices.findOne({ _id: 'queued' });
    expect(fields.filter((field) => queued?.[field] !== true)).toEqual([]);

    // For the record: the same writes sent all at once. FerretDB v1 runs each as read-then-write of
    // the whole document, so some are usually lost; MongoDB keeps them all.
    await devices.insertOne({ _id: 'unqueued' });
    await setAll((write) => write(), 'unqueued');
    const unqueued = await devices.findOne({ _id: 'unqueued' });
    process.stderr.write(`[PerKeyQueue] 40 concurrent $sets without the queue kept ${fields.filter((field) => unqueued?.[field] === true).length}\n`);
  });
});
