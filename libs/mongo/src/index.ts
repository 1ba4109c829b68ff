export { connectMongo, ensureIndexes, pingMongo, type MongoSettings } from './connection';
export { insertUnique, isDuplicateKey } from './errors';
export { collectionOf } from './collection';
export { PerKeyQueue } from './per-key-queue';
export { deleteEachById, findEach, updateEachById, type UpdateById } from './each-by-key';
export { findAll } from './find-all';
export { PLACE_PROBES, insertWithNextNumber, probePlaces, releasePlace, takePlace, type PlaceDoc } from './unique-insert';

export { runMigration } from './migrate';
export { addPageKeysOnce, type DoneMigrations } from './page-keys-migration';
