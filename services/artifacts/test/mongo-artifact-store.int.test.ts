import { randomUUID } from 'node:crypto';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerArtifactModels } from '../src/adapters/mongo/models';
import { MongoArtifactStore } from '../src/adapters/mongo/mongo-artifact-store';
import type { Artifact } from '../src/domain/model';

// Artifacts' store alone, against the run's real MongoDB-protocol server (FerretDB here), in a
// database of its own: build numbers 1, 2, 3… per project with none shared or skipped under
// concurrent uploads, an owner's monthly upload cap that racing uploads cannot overshoot, the
// archived flag, and signing keys unique per project by fingerprint.

let mongo: Connection;
let store: MongoArtifactStore;

function build(projectId: string): Omit<Artifact, 'buildNumber'> {
  return {
    id: randomUUID(),
    projectId,
    framework: 'esp_idf',
    chipFamily: 'esp32',
    boardId: '',
    hardwareRevision: '',
    partitionProfile: '',
    minNvsSchemaVersion: null,
    securityMode: '',
    versionLabel: '1.0.0',
    releaseNotes: '',
    checksumSha256: 'a'.repeat(64),
    fileSize: 1024,
    archived: false,
    signature: '',
    signingKeyId: '',
    storageKey: `artifacts/${randomUUID()}`,
    image: null,
    elf: null,
    sbom: null,
    createdAt: new Date(),
  };
}

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_artifacts_${randomUUID().slice(0, 8)}` });
  const models = registerArtifactModels(mongo);
  await ensureIndexes(mongo);
  store = new MongoArtifactStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

it('numbers a project’s builds 1, 2, 3… under concurrent uploads, none shared or skipped, and each project from 1', async () => {
  const projectId = randomUUID();
  const stored = await Promise.all(Array.from({ length: 10 }, () => store.insertWithNextBuildNumber(build(projectId))));
  expect(stored.map((artifact) => artifact.buildNumber).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  expect((await store.insertWithNextBuildNumber(build(randomUUID()))).buildNumber).toBe(1);
  const found = await store.findArtifact(stored[0]!.id);
  expect(found).toEqual(stored[0]);
  expect((await store.listArtifacts(projectId)).map((artifact) => artifact.buildNumber).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
});

it('gives racing uploads at most the owner’s monthly cap, and a released place back', async () => {
  const ownerId = randomUUID();
  const places = await Promise.all(Array.from({ length: 7 }, () => store.reserveUpload(ownerId, '2026-11', 4)));
  const taken = places.filter((place): place is number => place !== null);
  expect(taken).toHaveLength(4);
  expect(await store.reserveUpload(ownerId, '2026-11', 4)).toBeNull();
  // Another month is not held back.
  expect(await store.reserveUpload(ownerId, '2026-12', 4)).not.toBeNull();
  // A failed upload gives its place back.
  await store.releaseUpload(ownerId, '2026-11', taken[0]!);
  expect(await store.reserveUpload(ownerId, '2026-11', 4)).not.toBeNull();
});

it('lets uploads without a cap through, and counts them towards a cap set later', async () => {
  const ownerId = randomUUID();
  for (let upload = 0; upload < 3; upload += 1) expect(await store.reserveUpload(ownerId, '2026-11', 0)).not.toBeNull();
  expect(await store.reserveUpload(ownerId, '2026-11', 3)).toBeNull();
  expect(await store.reserveUpload(ownerId, '2026-11', 4)).not.toBeNull();
});

it('archives and unarchives within the project, saying whether anything changed', async () => {
  const projectId = randomUUID();
  const artifact = await store.insertWithNextBuildNumber(build(projectId));
  expect(await store.setArchived(projectId, artifact.id, true)).toEqual({ artifact: { ...artifact, archived: true }, changed: true });
  expect((await store.setArchived(projectId, artifact.id, true))?.changed).toBe(false);
  expect(await store.setArchived(randomUUID(), artifact.id, false)).toBeNull();
  expect((await store.setArchived(projectId, artifact.id, false))?.artifact.archived).toBe(false);
});

it('keeps a project’s signing keys unique by fingerprint, and deletes one only in its project', async () => {
  const projectId = randomUUID();
  const key = { id: randomUUID(), projectId, name: 'ci', publicKey: 'PEM', fingerprint: 'f'.repeat(64), createdAt: new Date() };
  expect(await store.insertSigningKey(key)).toBe('inserted');
  expect(await store.insertSigningKey({ ...key, id: randomUUID(), name: 'again' })).toBe('duplicate');
  expect(await store.insertSigningKey({ ...key, id: randomUUID(), projectId: randomUUID() })).toBe('inserted');
  expect((await store.listSigningKeys(projectId)).map((listed) => listed.id)).toEqual([key.id]);
  expect(await store.deleteSigningKey(randomUUID(), key.id)).toBe(false);
  expect(await store.deleteSigningKey(projectId, key.id)).toBe(true);
  expect(await store.listSigningKeys(projectId)).toEqual([]);
});
