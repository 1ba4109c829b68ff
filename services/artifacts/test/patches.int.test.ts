import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { sdkBinary } from '../../../device-sdk/test/harness/device-process';
import { firmwareImage } from '../../../device-sdk/test/harness/firmware-images';
import { DetoolsPatchMaker } from '../src/adapters/detools/detools-patch-maker';
import { registerArtifactModels } from '../src/adapters/mongo/models';
import { MongoArtifactStore } from '../src/adapters/mongo/mongo-artifact-store';
import { MongoPatchStore } from '../src/adapters/mongo/mongo-patch-store';
import { S3BinaryStorage, createS3Client } from '../src/adapters/s3/s3-binary-storage';
import { Artifacts } from '../src/domain/artifacts';
import type { Artifact } from '../src/domain/model';
import { Patches, type PatchesDeps } from '../src/domain/patches';

// Delta patches made by the artifacts service's workers (docs/api.md, "Delta patches"), against the
// run's real FerretDB and s3rver and the real detools: a job per (base, target, format) however
// often it is asked for, made once however many workers race for it, taken over when its worker
// stopped, published only after detools' own apply gave the target's bytes, and then applied
// byte-exact by the device SDK's applier; and the reasons a job fails.

const root = join(__dirname, '..', '..', '..');
const detools = join(root, '.tools', 'detools-venv', 'bin', 'detools');
const work = mkdtempSync(join(tmpdir(), 'ota-patches-'));
let mongo: Connection;
let artifacts: Artifacts;
let deps: PatchesDeps;
let images: Record<number, Buffer>;

async function build(projectId: string, version: number): Promise<Artifact> {
  const manifest = JSON.stringify({ version_label: `1.0.${version}`, framework: 'esp_idf', chip_family: 'esp32c3' });
  return artifacts.upload({ projectId, ownerId: randomUUID(), manifestJson: manifest, maxUploadsPerMonth: 0 }, (async function* () {
    yield images[version]!;
  })());
}

beforeAll(async () => {
  images = Object.fromEntries([1, 2, 3].map((version) => [version, readFileSync(firmwareImage(work, version))]));
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_patches_${randomUUID().slice(0, 8)}` });
  const models = registerArtifactModels(mongo);
  await ensureIndexes(mongo);
  const env = testStack().gatewayEnv;
  const s3Settings = {
    endpoint: testStack().s3Endpoint,
    region: 'us-east-1',
    bucket: `ota-test-patches-${randomUUID().slice(0, 8)}`,
    accessKeyId: env.S3_ACCESS_KEY_ID ?? 'S3RVER',
    secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? 'S3RVER',
    forcePathStyle: true,
    partSizeBytes: 5 * 1024 * 1024,
  };
  const storage = new S3BinaryStorage(createS3Client(s3Settings), s3Settings);
  await storage.ensureBucket();
  const store = new MongoArtifactStore(models);
  artifacts = new Artifacts({ store, storage, signedBinaryMaxBytes: 1 << 20, events: { artifactChanged: () => undefined } });
  deps = {
    artifacts: store,
    patches: new MongoPatchStore(models),
    storage,
    maker: new DetoolsPatchMaker({ command: detools, timeoutMs: 60_000 }),
    workDir: work,
    maxImageBytes: 16 * 1024 * 1024,
    leaseMs: 60_000,
  };
});

afterAll(async () => {
  await mongo?.dropDatabase();
  await mongo?.close();
  rmSync(work, { recursive: true, force: true });
});

test('a patch is queued once however often it is asked for, made and checked by a worker, and applied byte-exact by the device', async () => {
  const patches = new Patches(deps);
  const projectId = randomUUID();
  const [v1, v2] = [await build(projectId, 1), await build(projectId, 2)];
  const asked = await Promise.all(Array.from({ length: 5 }, () => patches.request(projectId, v2.id, v1.id)));
  expect(new Set(asked.map((patch) => patch.id)).size).toBe(1);
  expect(asked[0]).toMatchObject({ state: 'queued', baseSha256: v1.checksumSha256, targetSha256: v2.checksumSha256, format: 'detools-sequential-heatshrink-8-7' });

  expect(await patches.buildNext()).toBe(true);
  expect(await patches.buildNext()).toBe(false);
  const [made] = await patches.list(projectId, v2.id);
  expect(made).toMatchObject({ state: 'ready', reason: '', attempts: 1 });
  expect(made!.size).toBeLessThan(v2.fileSize / 10);

  // What object storage holds is the patch the list describes, and the device's applier makes the target of it.
  const stored = await buffer(await deps.storage.get(made!.storageKey));
  expect(createHash('sha256').update(stored).digest('hex')).toBe(made!.sha256);
  writeFileSync(join(work, 'published.patch'), stored);
  writeFileSync(join(work, 'base.bin'), images[1]!);
  const applied = spawnSync(sdkBinary('ota-delta-apply'), [join(work, 'base.bin'), join(work, 'published.patch'), join(work, 'applied.bin')], { encoding: 'utf8' });
  expect(applied.status).toBe(0);
  expect(readFileSync(join(work, 'applied.bin')).equals(images[2]!)).toBe(true);
  process.stdout.write(`[patches] 1.0.1 -> 1.0.2: ${made!.size} B patch for a ${v2.fileSize} B build\n`);
});

test('workers racing for jobs make each one once; a job whose worker stopped is taken over', async () => {
  const patches = new Patches(deps);
  const projectId = randomUUID();
  const [v1, v2, v3] = [await build(projectId, 1), await build(projectId, 2), await build(projectId, 3)];
  await patches.request(projectId, v3.id, v1.id);
  await patches.request(projectId, v3.id, v2.id);
  await patches.request(projectId, v2.id, v1.id);
  // Four workers at once, until none finds a job.
  const worker = async () => {
    let made = 0;
    while (await patches.buildNext()) made++;
    return made;
  };
  const made = await Promise.all(Array.from({ length: 4 }, worker));
  expect(made.reduce((sum, count) => sum + count, 0)).toBe(3);
  const all = [...(await patches.list(projectId, v3.id)), ...(await patches.list(projectId, v2.id))];
  expect(all.map((patch) => [patch.state, patch.attempts])).toEqual([['ready', 1], ['ready', 1], ['ready', 1]]);

  // A worker that took a job and stopped (its lease is in the past): another takes it over.
  const other = randomUUID();
  const [b1, b2] = [await build(other, 1), await build(other, 3)];
  await patches.request(other, b2.id, b1.id);
  const stopped = new Patches({ ...deps, leaseMs: -1 });
  const claimed = await deps.patches.claimPatchJob(new Date(), new Date(Date.now() - 1));
  expect(claimed?.state).toBe('building');
  expect(await stopped.buildNext()).toBe(true);
  expect((await patches.list(other, b2.id))[0]).toMatchObject({ state: 'ready', attempts: 2 });
});

test('a job fails with its reason: a build over the size limit, detools missing; and a request names what is wrong', async () => {
  const projectId = randomUUID();
  const [v1, v2, v3] = [await build(projectId, 1), await build(projectId, 2), await build(projectId, 3)];
  const small = new Patches({ ...deps, maxImageBytes: 1024 });
  await small.request(projectId, v2.id, v1.id);
  await small.buildNext();
  expect((await small.list(projectId, v2.id))[0]).toMatchObject({ state: 'failed', reason: expect.stringContaining('over PATCH_MAX_IMAGE_BYTES (1024)') });

  const noTool = new Patches({ ...deps, maker: new DetoolsPatchMaker({ command: join(work, 'no-detools-here'), timeoutMs: 60_000 }) });
  await noTool.request(projectId, v3.id, v2.id);
  await noTool.buildNext();
  expect((await noTool.list(projectId, v3.id))[0]).toMatchObject({ state: 'failed', reason: expect.stringContaining('detools could not be started') });

  await expect(small.request(projectId, v2.id, v2.id)).rejects.toThrow('same bytes');
  await expect(small.request(projectId, v2.id, (await build(randomUUID(), 1)).id)).rejects.toThrow('base_artifact_id names no build of this project');
  await expect(small.request(projectId, randomUUID(), v1.id)).rejects.toThrow('artifact not found');
});
