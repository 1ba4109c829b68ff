import type { Collection, Document } from 'mongodb';
import { insertUnique, isDuplicateKey } from './errors';

// FerretDB v1 runs updates as read-then-write: concurrent `$inc`s lose increments, and a filtered
// update or upsert is no compare-and-set. A unique-index insert is the one write that both FerretDB
// and MongoDB make atomic, so everything that concurrency must not break is built on it.

/** A numbered place that one holder takes by inserting it; nobody else can insert the same one. */
export interface PlaceDoc {
  _id: string;
  scope: string;
  place: number;
}

const MAX_ATTEMPTS = 10_000;
const MAX_PLACE_ROUNDS = 50;
// Uncapped places take a random number above this, which no capped place reaches.
const UNCAPPED_BASE = 2 ** 31;
/** Random places a capped taker tries by insert alone before it reads which places are held. */
export const PLACE_PROBES = 4;

/**
 * Takes one of the places 1 to `cap` of `scope` (null when `cap` are held), or, with `cap` 0, a
 * place that counts towards a cap set later.
 *
 * Each cap a scope's places are taken under is recorded first, as a small document of its own
 * (`capsOf`). While no recorded cap is 0 or above the cap asked for, every held place lies in [1,
 * cap], where the unique `_id` lets no more than `cap` be held: a taker then tries random places by
 * insert alone and reads nothing else, so a holder far from its cap pays a few inserts, not a read
 * of everything it holds. Near the cap (every try taken), or after a lowered cap or uncapped
 * places, the taker reads the scope's places, counts them all against the cap and picks a free one;
 * that read also forgets the caps whose places are gone. One race is left: places taken under a
 * cap that changes while they are taken (a plan changed mid-registration) may pass the new cap by
 * the takers in flight.
 */
export async function takePlace(places: Collection<PlaceDoc>, scope: string, cap: number): Promise<number | null> {
  if (cap === 0) {
    // Nothing to enforce, so nothing to read: a random number, as good as unique, that still counts
    // towards a cap set later (the cap check counts every place of the scope).
    await recordCap(places, scope, 0);
    return takeUncapped(places, scope);
  }
  const recorded = await capsOf(places, scope);
  if (!recorded.includes(cap) && recorded.length > 0) await recordCap(places, scope, cap);
  if (recorded.length > 0 && recorded.every((other) => other !== 0 && other <= cap)) {
    const probed = await probePlaces(places, scope, cap, PLACE_PROBES);
    if (probed !== null) return probed;
  }
  return takeByReading(places, scope, cap);
}

/**
 * Tries up to `tries` random places in [1, cap] by insert alone: the place taken, or null when
 * every try found its place held.
 */
export async function probePlaces(places: Collection<PlaceDoc>, scope: string, cap: number, tries: number): Promise<number | null> {
  for (let attempt = 0; attempt < tries; attempt += 1) {
    const place = 1 + Math.floor(Math.random() * cap);
    if (await insertUnique(places, { _id: `${scope}#${place}`, scope, place })) return place;
  }
  return null;
}

async function takeUncapped(places: Collection<PlaceDoc>, scope: string): Promise<number> {
  for (;;) {
    const place = UNCAPPED_BASE + Math.floor(Math.random() * 2 ** 40);
    if (await insertUnique(places, { _id: `${scope}#${place}`, scope, place })) return place;
  }
}

/** Reads every place of the scope, counts them all against `cap`, and takes a free one in [1, cap]. */
async function takeByReading(places: Collection<PlaceDoc>, scope: string, cap: number): Promise<number | null> {
  for (let round = 0; round < MAX_PLACE_ROUNDS; round += 1) {
    const held = new Set((await places.find({ scope }, { projection: { place: 1 } }).toArray()).map((doc) => doc.place));
    await recordWhatIsHeld(places, scope, cap, held);
    if (held.size >= cap) return null;
    const free: number[] = [];
    for (let place = 1; place <= cap; place += 1) if (!held.has(place)) free.push(place);
    // A random free place, so that concurrent takers rarely collide (they all read the same set).
    const place = free[Math.floor(Math.random() * free.length)];
    if (place === undefined) return null;
    if (await insertUnique(places, { _id: `${scope}#${place}`, scope, place })) return place;
  }
  throw new Error(`no free place in ${scope} after ${MAX_PLACE_ROUNDS} rounds`);
}

/**
 * Brings the scope's recorded caps in line with the places just read: the places above `cap` are
 * recorded (as 0 when uncapped, else as the highest of them) before `cap` itself, so a taker that
 * sees `cap` recorded also sees them; caps whose places are all gone are forgotten, which lets the
 * next takers try places by insert alone again.
 */
async function recordWhatIsHeld(places: Collection<PlaceDoc>, scope: string, cap: number, held: Set<number>): Promise<void> {
  let highest = 0;
  for (const place of held) highest = Math.max(highest, place);
  const above = highest >= UNCAPPED_BASE ? 0 : highest > cap ? highest : null;
  if (above !== null) await recordCap(places, scope, above);
  await recordCap(places, scope, cap);
  if (above === null) {
    const stale = (await capsOf(places, scope)).filter((other) => other === 0 || other > cap);
    for (const other of stale) await places.deleteOne({ _id: capId(scope, other) });
  }
}

function capId(scope: string, cap: number): string {
  return `${scope}#cap-${cap}`;
}

/** The caps the scope's places were taken under (0: uncapped): few documents, read by equality. */
async function capsOf(places: Collection<PlaceDoc>, scope: string): Promise<number[]> {
  return (await places.find({ scope: `${scope}#caps` }, { projection: { place: 1 } }).toArray()).map((doc) => doc.place);
}

async function recordCap(places: Collection<PlaceDoc>, scope: string, cap: number): Promise<void> {
  await insertUnique(places, { _id: capId(scope, cap), scope: `${scope}#caps`, place: cap });
}

export async function releasePlace(places: Collection<PlaceDoc>, scope: string, place: number): Promise<void> {
  await places.deleteOne({ _id: `${scope}#${place}` });
}

/**
 * Inserts `doc` with `field` set to one more than the highest value among the documents matching
 * `scope`. A unique index on (scope fields, field) must exist: two concurrent inserts that pick the
 * same number collide, and the loser picks again. Numbers are never shared and never skipped.
 */
export async function insertWithNextNumber<T extends Document>(
  collection: Collection<T>,
  scope: Partial<T>,
  field: keyof T & string,
  doc: Omit<T, typeof field>,
): Promise<number> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const [highest] = await collection
      .find(scope as never, { projection: { [field]: 1 } })
      .sort({ [field]: -1 })
      .limit(1)
      .toArray();
    const next = ((highest?.[field] as number | undefined) ?? 0) + 1;
    try {
      await collection.insertOne({ ...doc, [field]: next } as never);
      return next;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }
  throw new Error(`no free ${field} after ${MAX_ATTEMPTS} attempts`);
}
