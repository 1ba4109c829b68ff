import type { BulkWriteResult, Collection, Document, Filter, FindOptions, UpdateFilter } from 'mongodb';

/**
 * Reads and writes of many documents, each by one key, for lists of keys that FerretDB v1 would
 * otherwise serve by reading far more than the list.
 *
 * FerretDB v1 hands PostgreSQL only a filter's equalities; a list (`$in`) it applies to what those
 * read. `{project_id, _id: {$in: ids}}` therefore reads every document of the project. With one
 * equality per key and others beside it, PostgreSQL cannot tell which is the rarest and may read
 * every document of the other (a project's, a group's) and filter them by their documents. So each
 * key goes alone as an equality, and the rest of the filter (`alsoMatching`) as `$in` of its one
 * value, which matches as equality does and which FerretDB checks on the document it read.
 * MongoDB serves either form from its indexes.
 */
function byKeyAlone(field: string, value: unknown, alsoMatching: Record<string, unknown> = {}): Record<string, unknown> {
  const rest = Object.entries(alsoMatching).map(([name, condition]) => [name, isPlainValue(condition) ? { $in: [condition] } : condition]);
  return { ...Object.fromEntries(rest), [field]: value };
}

function isPlainValue(condition: unknown): boolean {
  return condition === null || ['string', 'number', 'boolean'].includes(typeof condition);
}

/** Reads in flight per list: enough to overlap round trips, few enough not to hold a store's pool. */
export const READS_AT_ONCE = 16;

/**
 * The documents whose `field` is one of `values` and that also match `alsoMatching`: one find per
 * value (byKeyAlone), READS_AT_ONCE in flight, each next one started as soon as one ends (not in
 * waves, which each wait for their slowest read), in no particular order. After a read fails no
 * other is started.
 */
export async function findEach<Doc extends Document>(
  collection: Collection<Doc>,
  field: string,
  values: readonly unknown[],
  options: { alsoMatching?: Record<string, unknown>; projection?: FindOptions['projection'] } = {},
): Promise<Doc[]> {
  const found: Doc[] = [];
  let next = 0;
  let failed = false;
  const reader = async () => {
    while (next < values.length && !failed) {
      const value = values[next++];
      try {
        found.push(...((await collection.find(byKeyAlone(field, value, options.alsoMatching) as Filter<Doc>, { projection: options.projection }).toArray()) as Doc[]));
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, values.length) }, reader));
  return found;
}

/** One document's update: the document by its `_id`, and what to do to it. */
export interface UpdateById<Doc extends Document> {
  _id: string;
  update: UpdateFilter<Doc>;
  /** Insert the document when there is none with this `_id`. */
  upsert?: boolean;
}

/**
 * Updates each document by its `_id` (byKeyAlone), all in one command (unordered); a document
 * that does not also match `alsoMatching` is left alone (the result's `matchedCount` says how many
 * did).
 *
 * Each statement is a multi-document update of one `_id`, which matches what a single-document
 * update would, `_id` being unique. FerretDB v1 keeps a single-document statement's read of
 * PostgreSQL open until the whole command ends, one pooled connection per statement: a command of
 * more statements than its pool holds (50 connections by default) waits for itself, and FerretDB
 * stops answering every client. A multi-document statement reads to the end of its matches, which
 * gives its connection back before the next statement.
 */
export function updateEachById<Doc extends Document>(collection: Collection<Doc>, updates: ReadonlyArray<UpdateById<Doc>>, alsoMatching: Record<string, unknown> = {}): Promise<BulkWriteResult> {
  return collection.bulkWrite(
    updates.map(({ _id, update, upsert }) => ({ updateMany: { filter: byKeyAlone('_id', _id, alsoMatching) as Filter<Doc>, update, ...(upsert ? { upsert } : {}) } })),
    { ordered: false },
  );
}

/**
 * Deletes each document by its `_id` (byKeyAlone) that also matches `alsoMatching`, in one
 * command (unordered); answers how many were deleted. FerretDB v1 closes each delete statement's
 * read before the next, so these are single-document statements.
 */
export async function deleteEachById<Doc extends Document>(collection: Collection<Doc>, ids: readonly string[], alsoMatching: Record<string, unknown> = {}): Promise<number> {
  if (ids.length === 0) return 0;
  const deleted = await collection.bulkWrite(
    ids.map((_id) => ({ deleteOne: { filter: byKeyAlone('_id', _id, alsoMatching) as Filter<Doc> } })),
    { ordered: false },
  );
  return deleted.deletedCount;
}
