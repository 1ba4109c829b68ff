import type { Collection, Document } from 'mongodb';
import type { Model } from 'mongoose';

/**
 * The driver's collection under a mongoose model, typed by the model's documents.
 *
 * The adapters on the hot paths call the driver directly (a mongoose query costs more than the
 * command it sends), and mongoose types `model.collection` as a collection of untyped documents
 * with ObjectId ids, while ours have string ids: without this, every filter and insert would need
 * a cast. This is that cast, in one place, and the adapter's filters and documents are then
 * checked against the fields its model declares.
 */
export function collectionOf<TDoc extends Document>(model: Model<TDoc>): Collection<TDoc> {
  return model.collection as unknown as Collection<TDoc>;
}
