import type { Collection, Document, Filter } from 'mongodb';
import { updateEachById } from './each-by-key';

/** The `data_migrations` collection of a service: one document per data migration done. */
export interface DoneMigrations {
  exists(filter: { _id: string }): PromiseLike<unknown>;
  updateOne(filter: { _id: string }, update: { $set: { at: Date } }, options: { upsert: true }): { exec(): Promise<unknown> };
}

/**
 * Sets `page_keys` (or `options.field`) on every document of `collection` that matches `missing` (a filter on documents
 * without keys), to what `keysOf` makes of it. Done once, then recorded as `name` in `done`: finding
 * the documents without keys reads every document (FerretDB cannot use an index for `$exists`),
 * which a service starting on a large store should not repeat. Writes in batches; safe to run again.
 * Answers whether it ran (false when it was recorded as done).
 */
export async function addPageKeysOnce<Doc extends Document & { _id: string }>(options: {
  done: DoneMigrations;
  name: string;
  collection: Collection<Doc>;
  missing: Filter<Doc>;
  /** The field the keys are written to; `page_keys` unless given. */
  field?: string;
  /** The fields keysOf reads. */
  fields: Record<string, 1>;
  /** The keys, or the one key, written to the field. */
  keysOf: (doc: Doc) => string[] | string;
}): Promise<boolean> {
  const { done, name, collection } = options;
  if (await done.exists({ _id: name })) return false;
  const BATCH = 1000;
  let batch: Doc[] = [];
  const write = async () => {
    if (batch.length === 0) return;
    await updateEachById(
      collection,
      batch.map((doc) => ({ _id: doc._id, update: { $set: { [options.field ?? 'page_keys']: options.keysOf(doc) } as never } })),
    );
    batch = [];
  };
  for await (const doc of collection.find(options.missing, { projection: { _id: 1, ...options.fields } })) {
    batch.push(doc as Doc);
    if (batch.length === BATCH) await write();
  }
  await write();
  await done.updateOne({ _id: name }, { $set: { at: new Date() } }, { upsert: true }).exec();
  return true;
}
