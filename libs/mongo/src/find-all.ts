import { Long, type Document } from 'mongodb';
import type { Model } from 'mongoose';

/**
 * The most documents asked for in one answer: every match of a bucket read (a few hundred to a few
 * thousand), or as many as fit the server's 16 MiB answer. Not more: FerretDB v1 makes room for
 * the whole batch size as soon as it has read one document (8 bytes a document: 8 MiB for a
 * batch size of a million, on every read).
 */
const FIND_ALL_BATCH = 10_000;

/**
 * Every document of `model`'s collection that matches `filter`, as plain objects (as a lean
 * query's), in one `find` command and, only when its answer could not hold them all, `getMore`s of the
 * same size.
 *
 * A query through the driver's cursor asks for 101 documents first and decodes each document of an
 * answer on its own as it hands it over; with command monitoring on (MONGODB_COMMAND_METRICS) the
 * driver also decodes every answer whole for its event. A command's answer is decoded once, and
 * that object serves the event too. For a bucket read of 250 small documents the cursor cost this
 * process 1.8 to 3.4 times the CPU of the command (docs/performance.md, "Bucket reads as one
 * command"); a read of one document by key costs the same either way. The filter goes to the store
 * as given: mongoose casts nothing, so it must hold the values as stored.
 */
export async function findAll<Doc>(model: Model<any>, filter: Document, options: { projection?: Document; batchSize?: number } = {}): Promise<Doc[]> {
  const db = model.db.db;
  if (!db) throw new Error(`findAll on ${model.modelName} before its connection is open`);
  const collection = model.collection.collectionName;
  const batchSize = options.batchSize ?? FIND_ALL_BATCH;
  // A cursor answers getMore only in the session that opened it; the driver would give each
  // command an implicit session of its own.
  const session = model.db.getClient().startSession();
  let cursorId: Long = Long.ZERO;
  try {
    const first = await db.command({ find: collection, filter, ...(options.projection ? { projection: options.projection } : {}), batchSize }, { session });
    const found = [...(first.cursor.firstBatch as Doc[])];
    cursorId = Long.fromValue(first.cursor.id as Long | number);
    while (!cursorId.isZero()) {
      const next = await db.command({ getMore: cursorId, collection, batchSize }, { session });
      found.push(...(next.cursor.nextBatch as Doc[]));
      cursorId = Long.fromValue(next.cursor.id as Long | number);
    }
    return found;
  } finally {
    // A read that failed half way leaves no cursor open on the server until it times out.
    if (!cursorId.isZero()) await db.command({ killCursors: collection, cursors: [cursorId] }, { session }).catch(() => undefined);
    await session.endSession();
  }
}
