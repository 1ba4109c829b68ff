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

/**
 * Takes a free place 1..cap in `scope` (cap 0: no upper bound). Returns its number, or null when
 * all `cap` places are held. Concurrent callers can never hold more than `cap` places together.
 */
export async function takePlace(places: Collection<PlaceDoc>, scope: string, cap: number): Promise<number | null> {
  const held = await places.countDocuments({ scope });
  // Places above the count are usually free; places given back leave holes below it.
  const candidates = function* () {
    const upper = cap > 0 ? cap : held + MAX_ATTEMPTS;
    for (let place = held + 1; place <= upper; place += 1) yield place;
    for (let place = 1; place <= Math.min(held, upper); place += 1) yield place;
  };
  for (const place of candidates()) {
    try {
      await places.insertOne({ _id: `${scope}#${place}`, scope, place });
      return place;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }
  return null;
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
