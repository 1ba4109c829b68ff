import { collectionOf, insertUnique } from '@ota/mongo';
import type { IdempotencyStore, StoredAnswer } from '../../http/idempotency';
import type { GatewayModels, IdempotencyDoc } from './models';

/** Idempotency keys in the gateway's database (collection `idempotency_keys`). */
export class MongoIdempotencyStore implements IdempotencyStore {
  constructor(private readonly models: GatewayModels) {}

  async claim(scope: string, now: Date, expiresAt: Date, abandonedBefore: Date): Promise<boolean> {
    const doc: IdempotencyDoc = { _id: scope, state: 'in_progress', fingerprint: '', status: 0, body: null, created_at: now, expires_at: expiresAt };
    if (await insertUnique(collectionOf(this.models.IdempotencyKey), doc)) return true;
    // A claim whose request never finished (its process stopped) is taken over once it is older
    // than any request may take; an expired answer is replaced. Only one taker deletes it.
    const stale = await collectionOf(this.models.IdempotencyKey).deleteOne({
      _id: scope,
      $or: [{ state: 'in_progress', created_at: { $lt: abandonedBefore } }, { expires_at: { $lt: now } }],
    });
    return stale.deletedCount === 1 && insertUnique(collectionOf(this.models.IdempotencyKey), doc);
  }

  async find(scope: string): Promise<StoredAnswer | 'in_progress' | null> {
    const doc = await this.models.IdempotencyKey.findById(scope).lean<IdempotencyDoc>();
    if (!doc) return null;
    if (doc.state === 'in_progress') return 'in_progress';
    return { fingerprint: doc.fingerprint, status: doc.status, body: doc.body };
  }

  async complete(scope: string, answer: StoredAnswer): Promise<void> {
    await collectionOf(this.models.IdempotencyKey).updateOne({ _id: scope }, {
      $set: { state: 'done', fingerprint: answer.fingerprint, status: answer.status, body: answer.body },
    });
  }

  async release(scope: string): Promise<void> {
    await this.models.IdempotencyKey.deleteOne({ _id: scope, state: 'in_progress' });
  }

  async deleteExpired(now: Date): Promise<number> {
    return (await this.models.IdempotencyKey.deleteMany({ expires_at: { $lt: now } })).deletedCount;
  }
}
