import type { Collection, Document } from 'mongodb';
import { findEach, READS_AT_ONCE } from './each-by-key';

// How findEach paces its reads. The store here is a list of the reads asked for, each answered
// when the test says: what is checked is when reads start, not what a store answers.

interface Read {
  filter: Record<string, unknown>;
  answer: (docs: Document[]) => void;
  fail: (error: Error) => void;
}

function heldStore() {
  const reads: Read[] = [];
  const collection = {
    find: (filter: Record<string, unknown>) => ({
      toArray: () => new Promise<Document[]>((answer, fail) => reads.push({ filter, answer, fail })),
    }),
  } as unknown as Collection<Document>;
  return { reads, collection };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('keeps READS_AT_ONCE reads in flight, starting the next as soon as any one ends', async () => {
  const { reads, collection } = heldStore();
  const values = Array.from({ length: 40 }, (_, index) => `d${index}`);
  const finding = findEach(collection, '_id', values, { alsoMatching: { project_id: 'p' } });
  await settle();
  expect(reads).toHaveLength(READS_AT_ONCE);
  // One read of the first sixteen ends while the others wait: the seventeenth starts at once.
  reads[3]!.answer([{ _id: 'd3' }]);
  await settle();
  expect(reads).toHaveLength(READS_AT_ONCE + 1);
  expect(reads[READS_AT_ONCE]!.filter).toEqual({ project_id: { $in: ['p'] }, _id: `d${READS_AT_ONCE}` });
  // The rest end one after another, each starting the next, until every value is read.
  for (let index = 0; index < reads.length; index += 1) {
    if (index !== 3) reads[index]!.answer([{ _id: reads[index]!.filter._id }]);
    await settle();
  }
  expect((await finding).map((doc) => doc._id).sort()).toEqual([...values].sort());
  expect(reads).toHaveLength(values.length);
});

test('starts no read after one fails, and fails with it', async () => {
  const { reads, collection } = heldStore();
  const finding = findEach(collection, '_id', Array.from({ length: 40 }, (_, index) => `d${index}`));
  const failure = expect(finding).rejects.toThrow('store gone');
  await settle();
  reads[0]!.fail(new Error('store gone'));
  await settle();
  for (const read of reads.slice(1)) read.answer([]);
  await settle();
  await failure;
  expect(reads).toHaveLength(READS_AT_ONCE);
});
