export { connectMongo, ensureIndexes, pingMongo, type MongoSettings } from './connection';
export { insertUnique, isDuplicateKey } from './errors';
export { collectionOf } from './collection';
export { PerKeyQueue } from './per-key-queue';
export { updateEachById, type UpdateById } from './update-each-by-id';
export { insertWithNextNumber, releasePlace, takePlace, type PlaceDoc } from './unique-insert';

export { runMigration } from './migrate';
export { addPageKeysOnce, type DoneMigrations } from './page-keys-migration';

