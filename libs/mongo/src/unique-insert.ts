import type { Collection, Document } from 'mongodb';
import { isDuplicateKey } from './errors';

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

export async function takePlace(places: Collection<PlaceDoc>, scope: string, cap: number): Promise<number | null> {
  if (cap === 0) {
    // Nothing to enforce, so nothing to read: a random number, as good as unique, that still counts
    // towards a cap set later (the cap check counts every place of the scope).
    for (;;) {
      const place = UNCAPPED_BASE + Math.floor(Math.random() * 2 ** 40);
      try {
        await places.insertOne({ _id: `${scope}#${place}`, scope, place });
        return place;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    }
  }
  for (let round = 0; round < MAX_PLACE_ROUNDS; round += 1) {
    const held = new Set((await places.find({ scope }, { projection: { place: 1 } }).toArray()).map((doc) => doc.place));
    if (held.size >= cap) return null;
    const free: number[] = [];
    for (let place = 1; place <= cap; place += 1) if (!held.has(place)) free.push(place);
    // A random free place, so that concurrent takers rarely collide (they all read the same set).
    const place = free[Math.floor(Math.random() * free.length)];
    if (place === undefined) return null;
    try {
      await places.insertOne({ _id: `${scope}#${place}`, scope, place });
      return place;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }
  throw new Error(`no free place in ${scope} after ${MAX_PLACE_ROUNDS} rounds`);
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
