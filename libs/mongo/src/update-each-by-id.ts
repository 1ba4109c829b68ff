import type { BulkWriteResult, Collection, Document, Filter, UpdateFilter } from 'mongodb';

/** One document's update: the document by its `_id`, and what to do to it. */
export interface UpdateById<Doc extends Document> {
  _id: string;
  update: UpdateFilter<Doc>;
  /** Insert the document when there is none with this `_id`. */
  upsert?: boolean;
}

/**
 * Updates each document by its `_id`, all in one command (unordered); a document that does not
 * also match `alsoMatching` is left alone (the result's `matchedCount` says how many did).
 *
 * Each statement is a multi-document update of one `_id`, which matches what a single-document
 * update would, `_id` being unique. FerretDB v1 keeps a single-document statement's read of
 * PostgreSQL open until the whole command ends, one pooled connection per statement: a command of
 * more statements than its pool holds (50 connections by default) waits for itself, and FerretDB
 * stops answering every client. A multi-document statement reads to the end of its matches, which
 * gives its connection back before the next statement.
 */
export function updateEachById<Doc extends Document>(collection: Collection<Doc>, updates: ReadonlyArray<UpdateById<Doc>>, alsoMatching: Filter<Doc> = {}): Promise<BulkWriteResult> {
  return collection.bulkWrite(
    updates.map(({ _id, update, upsert }) => ({ updateMany: { filter: { ...alsoMatching, _id } as never, update, ...(upsert ? { upsert } : {}) } })),
    { ordered: false },
  );
}
