import { deviceUuid, devicePageKeys } from './device-ids';
import { BUCKET_READS_IN_FLIGHT, countFromSample, readDevicePage, sampleDevices, type PagedDoc } from './page-buckets';

// The page walk and the sample over an in-memory project: the store's part (an equality on one
// bucket) is a filter here, and what is checked is the order, the cursors, the budget and the counts.

interface Doc extends PagedDoc {
  device_id: string;
  page_keys: string[];
}

function projectOf(size: number): Doc[] {
  return Array.from({ length: size }, (_, index) => {
    const id = deviceUuid('p', `unit-${index}`);
    return { _id: id, device_id: `unit-${index}`, page_keys: devicePageKeys('p', id) };
  });
}

/** The store's reads, counted: every device each query handed back. */
function storeOf(docs: Doc[]) {
  const store = { queries: 0, read: 0, find: async (pageKey: string | undefined) => {
    store.queries += 1;
    const found = pageKey ? docs.filter((doc) => doc.page_keys.includes(pageKey)) : [...docs];
    store.read += found.length;
    return found;
  } };
  return store;
}

async function walk(docs: Doc[], limit: number, options: { keep?: (doc: Doc) => boolean; readBudget?: number } = {}) {
  const store = storeOf(docs);
  const pages = [];
  let afterId: string | undefined;
  do {
    const page = await readDevicePage({ scope: 'p', find: store.find, keep: options.keep, limit, afterId, readBudget: options.readBudget ?? 10_000 });
    pages.push(page);
    afterId = page.nextAfterId;
    // A cursor that does not move on would walk forever, between promises that never let a timer fire.
    if (pages.length > 1_000) throw new Error(`the pages do not end: still after ${afterId}`);
  } while (afterId);
  return { pages, ids: pages.flatMap((page) => page.docs.map((doc) => doc._id)), store };
}

test.each([0, 1, 49, 50, 51, 1_999, 2_001, 20_000])('a project of %i devices is listed whole, once each, in id order, pages full but the last', async (size) => {
  const docs = projectOf(size);
  const { pages, ids } = await walk(docs, 50);
  expect(ids).toEqual(docs.map((doc) => doc._id).sort());
  expect(pages.slice(0, -1).every((page) => page.docs.length === 50)).toBe(true);
  // The last page is never an empty page after a full one.
  if (size > 0) expect(pages.at(-1)!.docs.length).toBeGreaterThan(0);
});

test('a page of a large project reads a few buckets, and its count is an estimate near the size', async () => {
  const docs = projectOf(70_000);
  const store = storeOf(docs);
  const page = await readDevicePage({ scope: 'p', find: store.find, limit: 50, readBudget: 10_000 });
  expect(page.docs).toHaveLength(50);
  expect(store.read).toBeLessThan(200);
  expect(page.total.estimated).toBe(true);
  expect(Math.abs(page.total.count - 70_000) / 70_000).toBeLessThan(0.5);
});

test('a search that finds little stops at its budget with a cursor past what it read, and the walk still finds every match once', async () => {
  const docs = projectOf(20_000);
  const keep = (doc: Doc) => doc.device_id.endsWith('77');
  const { pages, ids, store } = await walk(docs, 50, { keep, readBudget: 2_000 });
  expect(ids).toEqual(docs.filter(keep).map((doc) => doc._id).sort());
  const cut = pages.filter((page) => page.nextAfterId?.endsWith('-ffff-ffff-ffff-ffffffffffff'));
  expect(cut.length).toBeGreaterThan(3);
  // No page reads past its budget: here it walks buckets of about 20,000 / 16, and stops before
  // the second, which would pass 2,000 (with the probes of the finer levels, about 1,330 a page).
  expect(Math.max(...pages.map((page) => page.read))).toBeLessThanOrEqual(2_000);
  expect(store.read / pages.length).toBeGreaterThan(20_000 / 16);
  // A page after one cut by its budget reads on from the cut, not the cut bucket again: the project
  // is read about once, with the probes of the finer levels (about 80 devices a page here).
  expect(store.read).toBeLessThan(20_000 + pages.length * 200);
});

test('a page that keeps every device it reads is full whatever its read budget', async () => {
  const docs = projectOf(20_000);
  const { pages, ids } = await walk(docs, 1_000, { readBudget: 500 });
  expect(ids).toEqual(docs.map((doc) => doc._id).sort());
  expect(pages.slice(0, -1).every((page) => page.docs.length === 1_000)).toBe(true);
});

test('a sample of a large project reads a share of it, and counts from it are estimates; a small project is read whole', async () => {
  const large = storeOf(projectOf(60_000));
  const sample = await sampleDevices('p', large.find, 4_096);
  expect(sample.share).toBeLessThan(0.2);
  expect(large.queries).toBeLessThanOrEqual(33);
  const all = countFromSample(sample, sample.docs.length);
  expect(all.estimated).toBe(true);
  expect(Math.abs(all.count - 60_000) / 60_000).toBeLessThan(0.1);

  const small = storeOf(projectOf(3_000));
  const whole = await sampleDevices('p', small.find, 4_096);
  expect(countFromSample(whole, whole.docs.length)).toEqual({ count: 3_000, estimated: false });
});

/** A store whose every query waits a turn of the event loop, so that queries made together are seen in flight together. */
function slowStoreOf(docs: Doc[]) {
  const store = storeOf(docs);
  const counted = { ...store, inFlight: 0, mostInFlight: 0 };
  counted.find = async (pageKey: string | undefined) => {
    counted.inFlight += 1;
    counted.mostInFlight = Math.max(counted.mostInFlight, counted.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    counted.inFlight -= 1;
    return store.find(pageKey);
  };
  return counted;
}

test('a sample reads its buckets a few at once, never more than BUCKET_READS_IN_FLIGHT, and finds what it found one at a time', async () => {
  const docs = projectOf(60_000);
  const store = slowStoreOf(docs);
  const sample = await sampleDevices('p', store.find, 4_096);
  expect(store.mostInFlight).toBe(BUCKET_READS_IN_FLIGHT);
  const oneAtATime = await sampleDevices('p', storeOf(docs).find, 4_096);
  expect(sample.docs.map((doc) => doc._id)).toEqual(oneAtATime.docs.map((doc) => doc._id));
  expect(sample.share).toBe(oneAtATime.share);
});

test('a search reads ahead a few buckets at once within its budget, and still finds every match once, in order', async () => {
  const docs = projectOf(20_000);
  const keep = (doc: Doc) => doc.device_id.endsWith('77');
  const store = slowStoreOf(docs);
  const pages = [];
  let afterId: string | undefined;
  do {
    const page = await readDevicePage({ scope: 'p', find: store.find, keep, limit: 50, afterId, readBudget: 6_000 });
    pages.push(page);
    afterId = page.nextAfterId;
    if (pages.length > 1_000) throw new Error(`the pages do not end: still after ${afterId}`);
  } while (afterId);
  expect(store.mostInFlight).toBeGreaterThan(1);
  expect(store.mostInFlight).toBeLessThanOrEqual(BUCKET_READS_IN_FLIGHT);
  expect(pages.flatMap((page) => page.docs.map((doc) => doc._id))).toEqual(docs.filter(keep).map((doc) => doc._id).sort());
  // What it read ahead and did not use is at most a few buckets a page (a bucket here is about 20,000 / 16).
  expect(store.read / pages.length).toBeLessThan(6_000 + (BUCKET_READS_IN_FLIGHT * 20_000) / 16 + 200);
  // What a page counts as read stays within its budget.
  expect(Math.max(...pages.map((page) => page.read))).toBeLessThanOrEqual(6_000);
});

/** A store that records when each query starts and answers, each answering a turn of the event loop later. */
function loggedStoreOf(docs: Doc[]) {
  const store = storeOf(docs);
  const events: string[] = [];
  const find = async (pageKey: string | undefined) => {
    events.push(`start ${pageKey}`);
    await new Promise((resolve) => setImmediate(resolve));
    events.push(`end ${pageKey}`);
    return store.find(pageKey);
  };
  return { find, events };
}

test('a later page that starts in the second half of its bucket reads the next bucket at the same time; one in the first half does not', async () => {
  // About 49 devices a bucket of three hex digits: a page of 50 reads from the next bucket too.
  const docs = projectOf(200_000).sort((a, b) => a._id.localeCompare(b._id));
  const late = docs.find((doc) => doc._id.slice(3, 7) >= 'c000' && doc._id.startsWith('5'))!;
  const early = docs.find((doc) => doc._id.slice(3, 7) < '4000' && doc._id.startsWith('5'))!;
  for (const [after, overlaps] of [[late, true], [early, false]] as const) {
    const store = loggedStoreOf(docs);
    const page = await readDevicePage({ scope: 'p', find: store.find, limit: 50, afterId: after._id, readBudget: 500 });
    expect(page.docs.map((doc) => doc._id)).toEqual(docs.filter((doc) => doc._id > after._id).slice(0, 50).map((doc) => doc._id));
    const own = `p/${after._id.slice(0, 3)}`;
    const next = `p/${(Number.parseInt(after._id.slice(0, 3), 16) + 1).toString(16).padStart(3, '0')}`;
    expect(store.events.indexOf(`start ${next}`) < store.events.indexOf(`end ${own}`)).toBe(overlaps);
  }
});
