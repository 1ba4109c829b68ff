import { tmpdir } from 'node:os';
import { Bus } from '@ota/bus';
import { runService, serveGrpc } from '@ota/grpc';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { artifacts as pb } from '@ota/proto';
import { registerArtifactModels } from './adapters/mongo/models';
import { MongoArtifactStore } from './adapters/mongo/mongo-artifact-store';
import { DetoolsPatchMaker } from './adapters/detools/detools-patch-maker';
import { MongoPatchStore } from './adapters/mongo/mongo-patch-store';
import { natsArtifactEvents } from './adapters/nats/artifact-events';
import { Sboms } from './domain/sboms';
import { Vulnerabilities } from './domain/vulnerabilities';
import { MongoVulnerabilityStore } from './adapters/mongo/mongo-vulnerability-store';
import { vulnerabilityHandlers } from './grpc/vulnerability-handlers';
import { MongoSbomComponentStore } from './adapters/mongo/mongo-sbom-component-store';
import { S3BinaryStorage, createS3Client } from './adapters/s3/s3-binary-storage';
import { loadArtifactsConfig } from './config';
import { Artifacts } from './domain/artifacts';
import { startWorkers } from './domain/workers';
import { Crashes } from './domain/crashes';
import { GdbCrashDecoder } from './adapters/gdb/gdb-crash-decoder';
import { MongoCrashStore } from './adapters/mongo/mongo-crash-store';
import { Patches } from './domain/patches';
import { artifactsHandlers } from './grpc/artifacts-handlers';

const SERVICE = 'artifacts';

void runService(SERVICE, loadArtifactsConfig, async ({ config, logger, metrics }) => {

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger, metrics, commandMetrics: config.MONGODB_COMMAND_METRICS });
  const models = registerArtifactModels(mongo);
  await ensureIndexes(mongo);

  const s3Settings = {
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    bucket: config.S3_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    partSizeBytes: config.S3_PART_SIZE_BYTES,
  };
  const s3 = createS3Client(s3Settings, metrics);
  const storage = new S3BinaryStorage(s3, s3Settings);
  if (config.S3_CREATE_BUCKET) await storage.ensureBucket();

  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger, metrics });
  const store = new MongoArtifactStore(models);
  const artifacts = new Artifacts({
    store,
    storage,
    signedBinaryMaxBytes: config.SIGNED_BINARY_MAX_BYTES,
    events: natsArtifactEvents(bus),
  });

  // Delta patches are made here, by workers that take jobs from the store: never on a request's path.
  const patches = new Patches({
    artifacts: store,
    patches: new MongoPatchStore(models),
    storage,
    maker: new DetoolsPatchMaker({ command: config.DETOOLS_COMMAND, timeoutMs: config.PATCH_TIMEOUT_MS }),
    workDir: config.PATCH_WORK_DIR || tmpdir(),
    maxImageBytes: config.PATCH_MAX_IMAGE_BYTES,
    leaseMs: config.PATCH_LEASE_MS,
  });
  const stopPatchWorkers = startWorkers(() => patches.buildNext(), {
    workers: config.PATCH_WORKERS,
    pollMs: config.PATCH_POLL_MS,
    onError: (error) => logger.error({ err: error }, 'a patch worker failed to take or finish a job; it looks again'),
  });

  // Core dumps are decoded here too, by workers that run gdb: never on the device's request.
  const crashes = new Crashes({
    store: new MongoCrashStore(models),
    artifacts: store,
    storage,
    decoder: new GdbCrashDecoder({ command: config.GDB_COMMAND, timeoutMs: config.GDB_TIMEOUT_MS }),
    workDir: config.CRASH_WORK_DIR || tmpdir(),
    maxDumpBytes: config.COREDUMP_MAX_BYTES,
    maxPieceBytes: config.COREDUMP_PIECE_MAX_BYTES,
    leaseMs: config.CRASH_DECODE_LEASE_MS,
  });
  let lastSweep = 0;
  const stopCrashWorkers = startWorkers(async () => {
    if (Date.now() - lastSweep > 60_000) {
      lastSweep = Date.now();
      await crashes.dropStaleUploads(config.COREDUMP_UPLOAD_TTL_MS);
    }
    return crashes.decodeNext();
  }, {
    workers: config.CRASH_DECODE_WORKERS,
    pollMs: config.CRASH_DECODE_POLL_MS,
    onError: (error) => logger.error({ err: error }, 'a crash decode worker failed to take or finish a dump; it looks again'),
  });

  const sboms = new Sboms({ artifacts: store, components: new MongoSbomComponentStore(models), storage });
  const vulnerabilities = new Vulnerabilities({ store: new MongoVulnerabilityStore(models), artifacts: store });

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.artifacts.v1.ArtifactsService', pb.ArtifactsServiceService, { ...artifactsHandlers(artifacts, patches, crashes, sboms, { maxElfBytes: config.ELF_MAX_BYTES }), ...vulnerabilityHandlers(vulnerabilities) }),
  );

  return [
    stopPatchWorkers,
    stopCrashWorkers,
    () => mongo.close(),
    () => s3.destroy(),
    () => bus.drain(),
    ...serving,
  ];
});
