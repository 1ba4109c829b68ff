import { Bus } from '@ota/bus';
import { InMemoryDecisionViews, type DecisionDeployment } from '@ota/decision';
import { followViewEvents } from '@ota/decision-views';
import { createServiceClient, runService, serveGrpc } from '@ota/grpc';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { artifacts as artifactsPb, registry as pb, rollout as rolloutPb } from '@ota/proto';
import { GrpcDecisionSources } from './adapters/grpc/grpc-decision-sources';
import { addDevicePageKeys, addMembershipGroupKeys, addMembershipPageKeys, migrateDeviceProfiles, moveCheckEventsOntoDevices } from './adapters/mongo/data-migrations';
import { registerModels } from './adapters/mongo/models';
import { MongoMembershipChangeStore } from './adapters/mongo/membership-change-store';
import { MongoRegistryStore } from './adapters/mongo/mongo-registry-store';
import { membershipChangeAudit } from './adapters/nats/membership-change-audit';
import { loadRegistryConfig } from './config';
import { flushHealthTallies, HealthTallies } from './domain/device-health';
import { MembershipChanges } from './domain/membership-changes';
import { Registry } from './domain/registry';
import { GrpcDeviceEventLedger } from './adapters/grpc/grpc-device-event-ledger';
import { GrpcOfferLedger } from './adapters/grpc/grpc-offer-ledger';
import { registryHandlers } from './grpc/registry-handlers';
import { previousReleaseHandlers } from './previous-release/handlers';
import { fleetHandlers } from './grpc/fleet-handlers';
import { FleetSnapshots } from './domain/fleet-builds';
import { MongoFleetSnapshotStore } from './adapters/mongo/fleet-snapshot-store';

const SERVICE = 'registry';

void runService(SERVICE, loadRegistryConfig, async ({ config, logger, metrics }) => {
  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, logger, metrics, commandMetrics: config.MONGODB_COMMAND_METRICS });
  const models = registerModels(mongo);
  await ensureIndexes(mongo);
  await moveCheckEventsOntoDevices(models);
  await addDevicePageKeys(models);
  await addMembershipPageKeys(models);
  await addMembershipGroupKeys(models);
  await migrateDeviceProfiles(models);
  const devicePageReads = metrics.histogram('ota_registry_device_page_reads', 'Devices read from the store for one page of a device list.', [], [16, 64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576]);
  const store = new MongoRegistryStore(models, { devicePageReadBudget: config.DEVICE_PAGE_READ_BUDGET, countSample: config.DEVICE_COUNT_SAMPLE, onDevicePageRead: (devices) => devicePageReads.observe(devices) });
  const registry = new Registry({ store, warn: (error, message) => logger.warn({ err: error }, message) });

  // The check decides from views of rollout's active deployments and artifacts' builds, kept
  // fresh by their NATS events and reloaded in full now and then.
  const clientSettings = { defaultTimeoutMs: config.GRPC_CALL_TIMEOUT_MS, streamTimeoutMs: config.GRPC_CALL_TIMEOUT_MS, metrics };
  const rolloutClient = createServiceClient('ota.rollout.v1.RolloutService', rolloutPb.RolloutServiceService, config.ROLLOUT_ADDR, clientSettings);
  const artifactsClient = createServiceClient('ota.artifacts.v1.ArtifactsService', artifactsPb.ArtifactsServiceService, config.ARTIFACTS_ADDR, clientSettings);
  const sources = new GrpcDecisionSources(rolloutClient, artifactsClient);
  const views = new InMemoryDecisionViews<DecisionDeployment>(sources, logger);
  const bus = await Bus.connect({ url: config.NATS_URL, name: SERVICE, logger, metrics });
  followViewEvents(bus, views, logger);
  // Before serving, as rollout does: a check must not decide from empty views. Rollout and
  // artifacts do not wait for registry to start, so this cannot wait in a circle.
  await views.load(60_000);
  views.startPeriodicReload(config.VIEW_RELOAD_INTERVAL_MS);

  // Bulk membership changes run here in the background; a replica takes over one another left.
  const membershipChanges = new MembershipChanges({
    registryStore: store,
    store: new MongoMembershipChangeStore(models),
    publishAudit: membershipChangeAudit(bus),
    logger,
    leaseMs: config.MEMBERSHIP_CHANGE_LEASE_MS,
  });
  membershipChanges.startSweeping(Math.max(1_000, Math.floor(config.MEMBERSHIP_CHANGE_LEASE_MS / 2)));

  // Checks count device health in memory; rollout, which judges it, gets it every HEALTH_FLUSH_MS.
  const health = new HealthTallies(undefined, config.HEALTH_TIME_SCALE);
  const stopHealthFlush = flushHealthTallies(
    health,
    config.HEALTH_FLUSH_MS,
    async (tallies) => {
      await rolloutClient.recordDeviceHealth({ tallies: tallies.map((tally) => ({ ...tally, source: health.source })) });
    },
    (error) => logger.warn({ err: error }, 'device health not sent to rollout; the next flush sends it'),
  );

  // Which builds the fleet runs, a snapshot per project, channel and group each period.
  const fleetStore = new MongoFleetSnapshotStore(models);
  const fleetSnapshots = new FleetSnapshots(fleetStore, { periodMinutes: config.FLEET_SNAPSHOT_MINUTES, retentionDays: config.FLEET_SNAPSHOT_RETENTION_DAYS }, (error, message) => logger.warn({ err: error }, message));
  fleetSnapshots.start();

  const serving = await serveGrpc({ logger, metrics, settings: config }, (server) =>
    server.addService('ota.registry.v1.RegistryService', pb.RegistryServiceService, {
      ...registryHandlers(registry, { views, sources, offers: new GrpcOfferLedger(rolloutClient), events: new GrpcDeviceEventLedger(rolloutClient), health, store }, membershipChanges),
      ...previousReleaseHandlers(store, (error, message) => logger.warn({ err: error }, message)),
      ...fleetHandlers(fleetStore),
    }),
  );

  // The flush stops after serving (which stops first, in order) and before the rollout client closes.
  return [() => mongo.close(), () => rolloutClient.close(), stopHealthFlush, () => artifactsClient.close(), () => bus.drain(), () => views.stop(), () => membershipChanges.stop(), () => fleetSnapshots.stop(), ...serving];
});
