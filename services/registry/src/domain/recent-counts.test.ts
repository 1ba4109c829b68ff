import { RecentCounts } from './recent-counts';

test('answers from memory within the age, then the old count while one fresh count runs', async () => {
  let now = 0;
  let counted = 0;
  let release: () => void = () => undefined;
  const counts = new RecentCounts(10, () => now);
  const count = () => {
    counted += 1;
    return counted === 1 ? Promise.resolve(100) : new Promise<number>((resolve) => (release = () => resolve(150)));
  };
  expect(await counts.get('p', 60_000, count)).toBe(100);
  now = 30_000;
  expect(await counts.get('p', 60_000, count)).toBe(100);
  expect(counted).toBe(1);
  now = 61_000;
  // Stale: answered at once with the old count; two callers start one recount between them.
  expect(await counts.get('p', 60_000, count)).toBe(100);
  expect(await counts.get('p', 60_000, count)).toBe(100);
  expect(counted).toBe(2);
  release();
  await new Promise((resolve) => setImmediate(resolve));
  expect(await counts.get('p', 60_000, count)).toBe(150);
});

test('callers that find no count share the one first count', async () => {
  const counts = new RecentCounts(10);
  let counted = 0;
  const count = () => new Promise<number>((resolve) => setImmediate(() => resolve(++counted)));
  expect(await Promise.all([counts.get('p', 60_000, count), counts.get('p', 60_000, count)])).toEqual([1, 1]);
  expect(counted).toBe(1);
});

test('a recount that failed is started again by the next caller, who meanwhile gets the old count', async () => {
  let now = 0;
  const counts = new RecentCounts(10, () => now);
  expect(await counts.get('p', 60_000, () => Promise.resolve(100))).toBe(100);
  now = 61_000;
  expect(await counts.get('p', 60_000, () => Promise.reject(new Error('store away')))).toBe(100);
  await new Promise((resolve) => setImmediate(resolve));
  expect(await counts.get('p', 60_000, () => Promise.resolve(120))).toBe(100);
  await new Promise((resolve) => setImmediate(resolve));
  expect(await counts.get('p', 60_000, () => Promise.resolve(130))).toBe(120);
});

test('keeps at most its number of keys, dropping the oldest', async () => {
  const counts = new RecentCounts(2);
  for (const key of ['a', 'b', 'c']) await counts.get(key, 60_000, () => Promise.resolve(1));
  let recounted = false;
  await counts.get('a', 60_000, async () => ((recounted = true), 2));
  expect(recounted).toBe(true);
});
