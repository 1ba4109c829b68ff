import { Bus } from '@ota/bus';
import { createServiceClient, runService, serveGrpc } from '@ota/grpc';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { artifacts as artifactsPb, registry as registryPb, rollout as pb } from '@ota/proto';
import { GrpcArtifactCatalog } from './adapters/grpc/grpc-artifact-catalog';
import { AutomaticAudit } from './adapters/nats/automatic-audit';
import { followPeers, natsRolloutEvents } from './adapters/nats/rollout-events';
import { GrpcFleet } from './adapters/grpc/grpc-fleet';
import { registerRolloutModels } from './adapters/mongo/models';
import { MongoDeploymentStore } from './adapters/mongo/mongo-deployment-store';
import { MongoDeviceReportStore } from './adapters/mongo/mongo-device-report-store';
import { MongoDeviceStateStore } from './adapters/mongo/mongo-device-state-store';
import { MongoHealthTallies } from './adapters/mongo/mongo-health-tallies';
import { MongoOfferSlots } from './adapters/mongo/mongo-offer-slots';
import { MongoStatusCounts } from './adapters/mongo/mongo-status-counts';
import { loadServingRolloutConfig } from './config';
import { DeviceStatusCache } from './domain/device-status-cache';
import type { Deployment } from './domain/model';
import { Rollout } from './domain/rollout';
import { rolloutHandlers } from './grpc/rollout-handlers';
import { previousReleaseHandlers } from './previous-release/handlers';
import { startSupervision } from './supervision';
import { InMemoryDecisionViews } from '@ota/decision';
import { rolloutMetrics } from './adapters/rollout-metrics';

const SERVICE = 'rollout';

void runService(SERVICE, () => loadServingRolloutConfig(), async ({ config, logger, metrics }) => {
  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger, metrics, commandMetrics: config.MONGODB_COMMAND_METRICS });
  const models = registerRolloutModels(mongo);
  const deployments = new MongoDeploymentStore(models);
  const deviceStates = new MongoDeviceStateStore(models);
  const counts = new MongoStatusCounts(models, deviceStates);
  await ensureIndexes(mongo);
  await deviceStates.backfillStatusBits();
  await deviceStates.backfillDownloads();
  await deviceStates.addStatusPageKeys();

  const clientSettings = { defaultTimeoutMs: config.GRPC_CALL_TIMEOUT_MS, streamTimeoutMs: config.GRPC_CALL_TIMEOUT_MS, metrics };
  const artifactsClient = createServiceClient('ota.artifacts.v1.ArtifactsService', artifactsPb.ArtifactsServiceService, config.ARTIFACTS_ADDR, clientSettings);
  const catalog = new GrpcArtifactCatalog(artifactsClient);
  // A preview's read of the fleet runs under the deadline of the gateway's call.
  const registryClient = createServiceClient('ota.registry.v1.RegistryService', registryPb.RegistryServiceService, config.REGISTRY_ADDR, clientSettings);

  const views = new InMemoryDecisionViews<Deployment>(
    {
      loadActiveDeployments: () => deployments.listActiveDeployments(),
      loadDeployment: (id) => deployments.findDeployment(id),
      loadArtifacts: () => catalog.listAll(),
    },
    logger,
  );
  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger, metrics });
  const statusCache = new DeviceStatusCache(config.DEVICE_STATUS_CACHE_ENTRIES);
  followPeers(bus, views, statusCache, logger);
  await views.load(60_000);
  views.startPeriodicReload(config.VIEW_RELOAD_INTERVAL_MS);

  // Read when Prometheus scrapes, so `rollout` below exists by then.
  const figures = rolloutMetrics(metrics, { liveDeployments: () => deployments.listActiveOrPausedDeployments(), countsOf: (id) => rollout.counts.read(id) });
  const rollout: Rollout = new Rollout({
    deployments,
    deviceStates,
    reports: new MongoDeviceReportStore(models),
    counts,
    recountIntervalMs: config.STATUS_RECOUNT_INTERVAL_MS,
    catalog,
    fleet: new GrpcFleet(registryClient),
    health: new MongoHealthTallies(models),
    offerSlots: new MongoOfferSlots(models),
    views,
    statusCache,
    warn: (error, message) => logger.warn({ err: error }, message),
    events: natsRolloutEvents(bus, new AutomaticAudit(bus, logger), figures),
  });
  // A release before this one counted without steps: the first recount of each live deployment
  // takes its devices' steps (docs/architecture.md, "Changing a message between releases"); after
  // that, a recount only confirms.
  for (const deployment of await deployments.listActiveOrPausedDeployments()) rollout.counts.recountLater(deployment.id);
  const supervision = startSupervision(rollout, config, logger);

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.rollout.v1.RolloutService', pb.RolloutServiceService, { ...rolloutHandlers(rollout, figures), ...previousReleaseHandlers(rollout) }),
  );

  // Stopped in reverse order: supervision first, while the store and NATS are still there.
  return [
    () => mongo.close(),
    () => artifactsClient.close(),
    () => registryClient.close(),
    () => bus.drain(),
    () => views.stop(),
    () => supervision.stopCounting(),
    ...serving,
    () => supervision.stopSupervising(),
  ];
});
