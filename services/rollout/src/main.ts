import { Bus, SUBJECTS, type ArtifactChangedEvent, type DeploymentChangedEvent, type DeviceForgottenEvent, type DeviceStatusChangedEvent } from '@ota/bus';
import { createServiceClient, runService, serveGrpc } from '@ota/grpc';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { artifacts as artifactsPb, registry as registryPb, rollout as pb } from '@ota/proto';
import { GrpcArtifactCatalog, summaryOfEvent } from './adapters/artifacts-client';
import { AutomaticAudit } from './adapters/automatic-audit';
import { GrpcFleet } from './adapters/registry-client';
import { MongoRolloutStore, registerRolloutModels } from './adapters/mongo/mongo-rollout-store';
import { loadRolloutConfig } from './config';
import { DeviceStatusCache } from './domain/device-status-cache';
import { Rollout } from './domain/rollout';
import { rolloutHandlers } from './grpc/rollout-handlers';
import { InMemoryRolloutViews } from './views/rollout-views';
import { retryUntil } from './retry';

const SERVICE = 'rollout';

void runService(SERVICE, loadRolloutConfig, async ({ config, logger, metrics }) => {

  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger });
  const store = new MongoRolloutStore(registerRolloutModels(mongo));
  await ensureIndexes(mongo);
  await store.backfillStatusBits();

  const artifactsClient = createServiceClient('ota.artifacts.v1.ArtifactsService', artifactsPb.ArtifactsServiceService, config.ARTIFACTS_ADDR, {
    defaultTimeoutMs: config.GRPC_CALL_TIMEOUT_MS,
    streamTimeoutMs: config.GRPC_CALL_TIMEOUT_MS,
    metrics,
  });
  const catalog = new GrpcArtifactCatalog(artifactsClient);
  // A preview's read of the fleet runs under the deadline of the gateway's call.
  const registryClient = createServiceClient('ota.registry.v1.RegistryService', registryPb.RegistryServiceService, config.REGISTRY_ADDR, {
    defaultTimeoutMs: config.GRPC_CALL_TIMEOUT_MS,
    streamTimeoutMs: config.GRPC_CALL_TIMEOUT_MS,
    metrics,
  });

  const views = new InMemoryRolloutViews(
    {
      loadActiveDeployments: () => store.listActiveDeployments(),
      loadDeployment: (id) => store.findDeployment(id),
      loadArtifacts: () => catalog.listAll(),
    },
    logger,
  );
  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger });
  // Subscribe before the first load, so that nothing that changes during the load is missed.
  bus.subscribe<ArtifactChangedEvent>(SUBJECTS.artifactChanged, (event) => views.artifactSeen(summaryOfEvent(event)));
  bus.subscribe<DeploymentChangedEvent>(SUBJECTS.deploymentChanged, (event) => views.deploymentChanged(event.id));
  const statusCache = new DeviceStatusCache(config.DEVICE_STATUS_CACHE_ENTRIES);
  bus.subscribe<DeviceStatusChangedEvent>(SUBJECTS.deviceStatusChanged, (event) => {
    statusCache.merge(event.deployment_id, event.device_id, { status: event.status, rank: event.rank, rolledBack: event.rolled_back });
  });
  bus.subscribe<DeviceForgottenEvent>(SUBJECTS.deviceForgotten, (event) => statusCache.forgetDevice(event.device_id));
  // Core subscriptions missed whatever was published while NATS was away: forget the cached
  // statuses (what is not cached is read from the store again) and reload the views at once
  // rather than at the next periodic reload.
  bus.onReconnect(() => {
    statusCache.clear();
    views.reload().catch((error: unknown) => logger.warn({ err: error }, 'view reload after reconnect failed; the periodic reload retries'));
  });
  await retryUntil(() => views.reload(), 60_000, (error) => logger.warn({ err: error }, 'views not loaded yet; retrying'));
  views.startPeriodicReload(config.VIEW_RELOAD_INTERVAL_MS);

  const automaticAudit = new AutomaticAudit(bus, logger);
  const rollout = new Rollout({
    deployments: store,
    deviceStates: store,
    reports: store,
    catalog,
    fleet: new GrpcFleet(registryClient),
    views,
    statusCache,
    warn: (error, message) => logger.warn({ err: error }, message),
    events: {
      deploymentChanged: (deployment) =>
        bus.publish<DeploymentChangedEvent>(SUBJECTS.deploymentChanged, {
          id: deployment.id,
          project_id: deployment.projectId,
          state: deployment.state,
          updated_at: deployment.updatedAt.toISOString(),
        }),
      deviceStatusChanged: (deploymentId, deviceId, status) =>
        bus.publish<DeviceStatusChangedEvent>(SUBJECTS.deviceStatusChanged, {
          deployment_id: deploymentId,
          device_id: deviceId,
          status: status.status,
          rank: status.rank,
          rolled_back: status.rolledBack,
        }),
      deviceForgotten: (deviceId) => bus.publish<DeviceForgottenEvent>(SUBJECTS.deviceForgotten, { device_id: deviceId }),
      changedByItself: (deployment, action, details) => automaticAudit.record(deployment, action, details),
    },
  });
  // Every replica supervises; the store lets one of them make each change.
  let supervising: Promise<void> | undefined;
  const supervisor = setInterval(() => {
    supervising ??= rollout
      .superviseActive()
      .catch((error: unknown) => logger.warn({ err: error }, 'supervising active deployments failed; the next round tries again'))
      .finally(() => (supervising = undefined));
  }, config.SUPERVISE_INTERVAL_MS);
  supervisor.unref();

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.rollout.v1.RolloutService', pb.RolloutServiceService, rolloutHandlers(rollout)),
  );

  // Stopped in reverse order: supervision first, while the store and NATS are still there.
  return [
    () => mongo.close(),
    () => artifactsClient.close(),
    () => registryClient.close(),
    () => bus.drain(),
    () => views.stop(),
    ...serving,
    async () => {
      clearInterval(supervisor);
      await supervising;
    },
  ];
});
