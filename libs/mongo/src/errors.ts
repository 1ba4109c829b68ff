/** True for a unique-index violation (E11000), which both MongoDB and FerretDB report as code 11000. */
export function isDuplicateKey(error: unknown): boolean {
  return (error as { code?: number })?.code === 11000;
}

/** A collection to insert into; the driver's and mongoose's collections both are. */
interface InsertTarget {
  insertOne(doc: never): Promise<unknown>;
}

/** Inserts `doc`: true when written, false when a unique index already held its key (nothing written). */
export async function insertUnique(collection: InsertTarget, doc: object): Promise<boolean> {
  try {
    await collection.insertOne(doc as never);
    return true;
  } catch (error) {
    if (isDuplicateKey(error)) return false;
    throw error;
  }
}
