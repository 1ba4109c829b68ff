import { randomUUID } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import { testStack } from '@ota/testkit';
import { connectMongo, findAll } from '@ota/mongo';

// Against the run's real MongoDB-protocol server (FerretDB here), in a database of this test's own.

interface Membership {
  _id: string;
  device_id: string;
  group_id: string;
  bucket: number;
}

let mongo: Connection;
let memberships: Model<Membership>;

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_find_all_${randomUUID().slice(0, 8)}` });
  memberships = mongo.model<Membership>('Membership', new Schema<Membership>({ _id: String, device_id: String, group_id: String, bucket: Number }, { versionKey: false }));
  // 250 to a bucket: more than the 101 a cursor's first answer holds.
  await memberships.collection.insertMany(Array.from({ length: 1_000 }, (_, index) => ({ _id: `m-${index}`, device_id: `d-${index}`, group_id: `g-${index % 7}`, bucket: index % 4 })) as never);
});
afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

const idsOf = (docs: Array<{ _id: string }>) => docs.map((doc) => doc._id).sort();

it('reads every match, as a lean query does, with only the fields asked for', async () => {
  const docs = await findAll<Pick<Membership, '_id' | 'group_id'>>(memberships, { bucket: 2 }, { projection: { group_id: 1 } });
  const lean = await memberships.find({ bucket: 2 }, { group_id: 1 }).lean();
  expect(docs).toHaveLength(250);
  expect(idsOf(docs)).toEqual(idsOf(lean));
  expect(docs.find((doc) => doc._id === 'm-6')).toEqual({ _id: 'm-6', group_id: 'g-6' });
});

it('goes on with getMore while the first answer does not hold every match, each document once', async () => {
  const docs = await findAll<Membership>(memberships, { bucket: 1 }, { batchSize: 40 });
  expect(docs).toHaveLength(250);
  expect(new Set(idsOf(docs)).size).toBe(250);
  expect(docs.every((doc) => doc.bucket === 1 && doc.device_id === doc._id.replace('m-', 'd-'))).toBe(true);
});

it('answers nothing for a filter nothing matches', async () => {
  expect(await findAll(memberships, { bucket: 9 })).toEqual([]);
});

it('reads the same at once from many callers', async () => {
  const reads = await Promise.all(Array.from({ length: 12 }, (_, index) => findAll<Membership>(memberships, { bucket: index % 4 }, { batchSize: 100 })));
  reads.forEach((docs, index) => {
    expect(docs).toHaveLength(250);
    expect(docs.every((doc) => doc.bucket === index % 4)).toBe(true);
  });
});
