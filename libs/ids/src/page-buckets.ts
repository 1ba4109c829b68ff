import { DEVICE_PAGE_LEVELS, devicePageKey } from './device-ids';
import { byUuid, pageOfSorted } from './sorted-page';

/**
 * A page of a device list, read one page bucket at a time (devicePageKeys in @ota/ids).
 *
 * FerretDB v1 hands PostgreSQL only the equality filters of a query: no range, sort or limit when a
 * filter is present. A page asked for as "the first 50 after X, sorted" therefore read every
 * device of the project, which at a million devices took 6 s a page (docs/performance.md). Here
 * every query is an equality on one bucket, which an index answers, and the page is put together
 * from buckets in UUID order, so the work of a page follows the page and the filters, not the fleet.
 *
 * The bucket level is chosen from what the page's first bucket holds: the finest level whose bucket
 * holds at least PROBE_ENOUGH matches of the equality filters (more with a text search), or, when
 * even a sixteenth of the id space holds fewer (a small project, a small group), every match read
 * at once.
 */

/** A bucket that holds this many matches is big enough to walk; a coarser one would read more per page than needed. */
export const PROBE_ENOUGH = 16;
/** Matches that, by the first bucket, number about this many or fewer are read in one query. */
export const READ_WHOLE_UP_TO = 1_000;
/**
 * With a text search most of what a page reads is thrown away, and each query costs FerretDB
 * about as much as a few hundred devices (docs/performance.md): a search walks buckets of at
 * least this many devices.
 */
export const SEARCH_PROBE_ENOUGH = 1_000;

/**
 * Bucket reads of one page or one sample in flight at once. A lone query keeps FerretDB and
 * PostgreSQL busy one after the other, so with a few at once they overlap on the cores one leaves
 * idle (and a MongoDB answers them in parallel); the store's work is the same.
 */
export const BUCKET_READS_IN_FLIGHT = 4;

export interface PagedDoc {
  _id: string;
}

export interface DevicePageQuery<Doc extends PagedDoc> {
  /** The first part of the page keys: the project for its devices, a deployment for its devices' states. */
  scope: string;
  /** Reads the devices matching the equality filters and, if given, in the bucket `pageKey`. */
  find: (pageKey: string | undefined) => Promise<Doc[]>;
  /** What the store cannot filter by equality (the text search); none: every device the store finds. */
  keep?: (doc: Doc) => boolean;
  limit: number;
  /** The page starts after this UUID; none: the first page. */
  afterId?: string;
  /** After reading this many devices, a page ends with what it found and says where to go on. */
  readBudget: number;
}

export interface DevicePageResult<Doc> {
  docs: Doc[];
  total: { count: number; estimated: boolean };
  nextAfterId?: string;
  /** Devices read from the store for this page: the cost the buckets keep bounded. */
  read: number;
}

export async function readDevicePage<Doc extends PagedDoc>(query: DevicePageQuery<Doc>): Promise<DevicePageResult<Doc>> {
  // A search's buckets stay well within its read budget, so that one page reads several.
  const enough = query.keep ? Math.max(PROBE_ENOUGH, Math.min(SEARCH_PROBE_ENOUGH, Math.floor(query.readBudget / 8))) : PROBE_ENOUGH;
  let read = 0;
  for (let level = DEVICE_PAGE_LEVELS; level >= 1; level -= 1) {
    const first = firstBucketOf(query.afterId, level);
    const ahead = readAhead((bucket) => query.find(devicePageKey(query.scope, hexOf(bucket, level))));
    // A page after a device in the second half of its bucket finds fewer after it there than in a
    // whole bucket, so it likely needs the next one too: asked for at once, the two reads overlap
    // rather than follow each other. Not a page that keeps only some of what it reads, whose
    // budget may end it with the first.
    const startsLate = !query.keep && query.afterId !== undefined && Number.parseInt(query.afterId.slice(level, level + 4).padEnd(4, '0'), 16) >= 0x8000;
    ahead.request(first, startsLate ? Math.min(2, 16 ** level - first) : 1);
    const docs = await ahead.take(first);
    read += docs.length;
    if (docs.length < enough) continue;
    // A few thousand matches are read whole, and counted exactly, for about the cost of two buckets.
    if (docs.length * 16 ** level <= READ_WHOLE_UP_TO) break;
    return walkBuckets(query, level, first, docs, read, ahead);
  }
  return readEveryMatch(query, read);
}

/**
 * The bucket of `level` a page after `afterId` starts in: the one that holds `afterId`, or the next
 * when `afterId` is the last id it can hold (the cursor of a page cut by its budget, which has
 * looked at all of that bucket). So a page cut by its budget is followed by one that reads on from
 * there, not the cut bucket again.
 */
function firstBucketOf(afterId: string | undefined, level: number): number {
  if (!afterId) return 0;
  const bucket = Number.parseInt(afterId.slice(0, level), 16);
  const endsBucket = /^[f-]*$/.test(afterId.slice(level));
  return endsBucket && bucket + 1 < 16 ** level ? bucket + 1 : bucket;
}

/** Few matches: all of them, sorted here; the count is exact. */
async function readEveryMatch<Doc extends PagedDoc>(query: DevicePageQuery<Doc>, readSoFar: number): Promise<DevicePageResult<Doc>> {
  const docs = await query.find(undefined);
  const { items, ...page } = pageOfSorted(keepOf(query, docs).sort(byId), (doc) => doc._id, query.limit, query.afterId);
  return { docs: items, ...page, read: readSoFar + docs.length };
}

/**
 * Buckets of `level` in order from the one the page starts in (already read: `first`), until the
 * page holds one match more than its limit (so that it knows a next page exists), the id space
 * ends, or, for a page that keeps only some of what it reads, one more bucket would pass the read
 * budget. A level's buckets hold about as many devices each (UUIDs are hashes), so the first one
 * read says what the next will cost: such a page reads at most about its budget, and at least one
 * bucket.
 */
async function walkBuckets<Doc extends PagedDoc>(
  query: DevicePageQuery<Doc>,
  level: number,
  firstBucket: number,
  first: Doc[],
  readSoFar: number,
  ahead: ReadAhead<Doc>,
): Promise<DevicePageResult<Doc>> {
  const buckets = 16 ** level;
  let bucket = firstBucket;
  let docs = first;
  let read = readSoFar;
  let bucketsRead = 0;
  let matchesSeen = 0;
  const page: Doc[] = [];
  for (;;) {
    bucketsRead += 1;
    const matching = keepOf(query, docs).sort(byId);
    matchesSeen += matching.length;
    for (const doc of matching) if (!query.afterId || doc._id > query.afterId) page.push(doc);
    // Every bucket read: the count is exact; otherwise the matches of the buckets read, scaled to all.
    const estimate = () => ({ count: Math.round((matchesSeen * buckets) / bucketsRead), estimated: bucketsRead < buckets });
    if (page.length > query.limit) return { docs: page.slice(0, query.limit), total: estimate(), nextAfterId: page[query.limit - 1]!._id, read };
    bucket += 1;
    if (bucket === buckets) return { docs: page, total: estimate(), read };
    // Only a page that keeps some of what it reads (a search, a filter the store cannot apply) can
    // spend its budget: one that keeps every device it reads is bounded by its limit, and is full.
    const budgetLeft = query.keep ? query.readBudget - read : Number.POSITIVE_INFINITY;
    if (budgetLeft < first.length) {
      // Everything up to the end of the last bucket read has been looked at.
      const lastPrefix = hexOf(bucket - 1, level);
      return { docs: page, total: estimate(), nextAfterId: `${lastPrefix.padEnd(8, 'f')}-ffff-ffff-ffff-ffffffffffff`, read };
    }
    // The buckets the page looks to need still, by what its buckets held so far: those its budget
    // allows, and, once it has found matches, those that would fill it.
    const forBudget = Math.floor(budgetLeft / Math.max(1, first.length));
    const forPage = matchesSeen > 0 ? Math.ceil(((query.limit + 1 - page.length) * bucketsRead) / matchesSeen) : Number.POSITIVE_INFINITY;
    ahead.request(bucket, Math.min(forBudget, forPage, buckets - bucket, BUCKET_READS_IN_FLIGHT));
    docs = await ahead.take(bucket);
    read += docs.length;
  }
}

type ReadAhead<Doc> = ReturnType<typeof readAhead<Doc>>;

/**
 * Reads of the buckets from a given one on, started before they are needed, at most
 * BUCKET_READS_IN_FLIGHT at once. A read the page ends without is left to finish; its failure
 * then is nobody's, and its devices are not counted as the page's.
 */
function readAhead<Doc>(find: (bucket: number) => Promise<Doc[]>) {
  const started = new Map<number, Promise<Doc[]>>();
  return {
    /** Starts the reads of `count` buckets from `from` that are not started yet. */
    request(from: number, count: number): void {
      for (let next = from; next < from + Math.max(1, count); next += 1) {
        if (started.has(next)) continue;
        const reading = find(next);
        reading.catch(() => undefined);
        started.set(next, reading);
      }
    },
    /** The bucket's devices (started now if it was not). */
    take(bucket: number): Promise<Doc[]> {
      this.request(bucket, 1);
      const reading = started.get(bucket)!;
      started.delete(bucket);
      return reading;
    },
  };
}

/** Reads every one of `keys`, at most BUCKET_READS_IN_FLIGHT at once, and answers them in their order. */
async function readAll<Doc>(keys: string[], find: (pageKey: string) => Promise<Doc[]>): Promise<Doc[][]> {
  const answers: Doc[][] = new Array<Doc[]>(keys.length);
  let next = 0;
  const reader = async () => {
    while (next < keys.length) {
      const index = next++;
      answers[index] = await find(keys[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BUCKET_READS_IN_FLIGHT, keys.length) }, reader));
  return answers;
}

function keepOf<Doc extends PagedDoc>(query: DevicePageQuery<Doc>, docs: Doc[]): Doc[] {
  return query.keep ? docs.filter(query.keep) : docs;
}

function hexOf(bucket: number, level: number): string {
  return bucket.toString(16).padStart(level, '0');
}

function byId(a: PagedDoc, b: PagedDoc): number {
  return byUuid(a._id, b._id);
}

/**
 * About how many devices a count reads from a large project: the share of the fleet it reads is
 * this many devices' worth of page buckets, spread over the id space. The count of a filter that
 * holds a share p of the fleet is then off by about 1 / sqrt(p * SAMPLE_DEVICES) (one standard
 * deviation; the buckets' sizes vary too): 10% for a tenth of the fleet. FerretDB reads about
 * 4,000 devices a second (docs/performance.md), so the default keeps a count near 300 ms.
 */
export const SAMPLE_DEVICES = 1_024;
/** A sample is read in at most this many queries (each costs FerretDB about as much as a few hundred devices). */
const MAX_SAMPLE_QUERIES = 32;

export interface DeviceSample<Doc> {
  docs: Doc[];
  /** The share of the project's devices read: 1 when every device was (a count from it is exact). */
  share: number;
}

/**
 * A sample of a project's devices to count from: every device of a small project; of a large one,
 * page buckets spread evenly over the id space, about SAMPLE_DEVICES devices in all. UUIDs are
 * hashes, so any bucket is a fair draw of the fleet.
 */
export async function sampleDevices<Doc extends PagedDoc>(scope: string, find: (pageKey: string | undefined) => Promise<Doc[]>, sampleSize = SAMPLE_DEVICES): Promise<DeviceSample<Doc>> {
  for (let level = DEVICE_PAGE_LEVELS; level >= 1; level -= 1) {
    const sample = await sampleBuckets(scope, find, sampleSize, level);
    if (sample) return sample;
  }
  return { docs: await find(undefined), share: 1 };
}

/**
 * A sample of about `sampleSize` devices from the page buckets of one level, spread evenly over the
 * id space; none when the level's buckets are too small to make it in MAX_SAMPLE_QUERIES reads, or
 * when it would take half of them or more (a coarser level, or every device, serves then).
 */
export async function sampleBuckets<Doc extends PagedDoc>(scope: string, find: (pageKey: string) => Promise<Doc[]>, sampleSize: number, level: number): Promise<DeviceSample<Doc> | undefined> {
  const first = await find(devicePageKey(scope, '0'.repeat(level)));
  const buckets = 16 ** level;
  const wanted = Math.ceil(sampleSize / Math.max(1, first.length));
  if (wanted > MAX_SAMPLE_QUERIES || wanted * 2 >= buckets) return undefined;
  const rest = Array.from({ length: wanted - 1 }, (_, index) => devicePageKey(scope, hexOf(Math.floor(((index + 1) * buckets) / wanted), level)));
  return { docs: [...first, ...(await readAll(rest, find)).flat()], share: wanted / buckets };
}

/** How many devices of the project hold `kept`, from its sample: exact when the sample is the whole project. */
export function countFromSample<Doc>(sample: DeviceSample<Doc>, kept: number): { count: number; estimated: boolean } {
  return { count: Math.round(kept / sample.share), estimated: sample.share < 1 };
}
