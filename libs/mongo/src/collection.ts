import type { Collection, Document } from 'mongodb';
import type { Model } from 'mongoose';

/** The driver's collection of each model, made once its connection is open. */
const driverCollections = new WeakMap<Model<never>, Collection<Document>>();

/**
 * The driver's collection under a mongoose model, typed by the model's documents.
 *
 * The adapters on the hot paths call the driver directly: a mongoose query costs more than the
 * command it sends, and so does mongoose's wrapper of the collection (`model.collection`), which
 * makes an ObjectId, two events and a promise for each operation (2% of registry's CPU under
 * checks, docs/performance.md, "What an idle service costs"). The wrapper is used only before the
 * connection has opened, when it queues the command until it does; once open, a command while the
 * server is away waits in the driver's server selection, and either way ends as unavailable
 * (libs/errors). Mongoose types `model.collection` as a collection of untyped documents with
 * ObjectId ids, while ours have string ids: the cast is here, in one place, and the adapter's
 * filters and documents are then checked against the fields its model declares.
 */
export function collectionOf<TDoc extends Document>(model: Model<TDoc>): Collection<TDoc> {
  const key = model as unknown as Model<never>;
  const known = driverCollections.get(key);
  if (known) return known as unknown as Collection<TDoc>;
  const db = model.db.db;
  if (!db) return model.collection as unknown as Collection<TDoc>;
  const collection = db.collection<TDoc>(model.collection.collectionName);
  driverCollections.set(key, collection as unknown as Collection<Document>);
  return collection;
}
