import { randomUUID } from 'node:crypto';
import { Collection } from 'mongodb';
import mongoose, { Schema } from 'mongoose';
import { testStack } from '@ota/testkit';
import { collectionOf } from '@ota/mongo';

// Against the run's real MongoDB-protocol server (FerretDB here), in a database of this test's own.

interface NoteDoc {
  _id: string;
  text: string;
}

const noteSchema = new Schema<NoteDoc>({ _id: String, text: String }, { versionKey: false });

describe('collectionOf', () => {
  it("queues a command made before the connection opens, then hands out the driver's own collection", async () => {
    const connection = mongoose.createConnection(testStack().mongodbUri, { dbName: `ota_test_${randomUUID().slice(0, 8)}`, autoIndex: false });
    try {
      const Note = connection.model<NoteDoc>('Note', noteSchema, 'notes');
      // Before the connection opens there is no driver collection yet: mongoose's holds the insert.
      const early = collectionOf(Note).insertOne({ _id: 'early', text: 'before open' });
      await connection.asPromise();
      await early;

      const open = collectionOf(Note);
      expect(open).toBeInstanceOf(Collection);
      expect(collectionOf(Note)).toBe(open);
      await open.insertOne({ _id: 'late', text: 'after open' });
      expect(await open.find({}, { sort: { _id: 1 } }).toArray()).toEqual([
        { _id: 'early', text: 'before open' },
        { _id: 'late', text: 'after open' },
      ]);
      await connection.dropDatabase();
    } finally {
      await connection.close();
    }
  });
});
