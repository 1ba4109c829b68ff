import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { testStack } from '@ota/testkit';
import { PerKeyQueue, insertWithNextNumber, releasePlace, takePlace, type PlaceDoc } from '@ota/mongo';

// Against the run's real MongoDB-protocol server (FerretDB here), in a database of this test's own.

let client: MongoClient;
let db: Db;

beforeAll(async () => {
  client = await MongoClient.connect(testStack().mongodbUri, { maxPoolSize: 30 });
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
