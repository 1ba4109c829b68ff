import { int, loadConfig, str } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

export const registrySettings = {
  ...commonServiceSettings({ grpcPort: 50051, metricsPort: 9101, database: 'ota_registry' }),
  ROLLOUT_ADDR: str("address of the rollout service (the check's views load active deployments from it, and it confirms each offer)", '127.0.0.1:50053'),
  ARTIFACTS_ADDR: str("address of the artifacts service (the check's views load the builds' summaries from it)", '127.0.0.1:50052'),
  DEVICE_PAGE_READ_BUDGET: int(
    'devices a page of a device list that keeps only some of what it reads (a text search, a filter judged on each device) may read from the store, at most, before it answers with what it found and where the next page starts; a page that keeps every device it reads is always full; FerretDB reads about 3,000 to 4,000 devices a second, so a page of the default takes it about 150 ms',
    500,
    100,
  ),
  DEVICE_COUNT_SAMPLE: int(
    "about how many devices a count of a large project's devices reads (reach, targeted devices, chip families, groups' and channels' counts): above it counts are estimates from that many devices' worth of page buckets, off by about 10% for a tenth of the fleet at the default (4 times the sample halves it); a count of one group or one channel, which the store filters, reads a quarter of it (about 6% off)",
    1_024,
    256,
  ),
  MEMBERSHIP_CHANGE_LEASE_MS: int(
    'how long a registry replica keeps a bulk membership change it runs without progress before another replica takes it over from its last part (a replica that stopped); replicas look for such changes every half of it',
    30_000,
    2_000,
  ),
  HEALTH_FLUSH_MS: int(
    "how often a registry replica sends rollout the device health its checks counted for deployments with the health guardrail (hours run, abnormal resets); a guardrail judges what has arrived, so a regression shows this much later",
    5_000,
    100,
  ),
  HEALTH_TIME_SCALE: int(
    "device-seconds one second of the registry's clock may hold for one device's health (its hours are bounded by the time since its previous report); 1 is real time, and anything else is only for a fleet simulated in compressed time (the tests run at 3600)",
    1,
    1,
  ),
  FLEET_SNAPSHOT_MINUTES: int('how often the count of devices per build is kept, per project, channel and group, for the fleet chart (one registry replica takes each period\'s snapshots)', 60, 1),
  FLEET_SNAPSHOT_RETENTION_DAYS: int('how long a fleet snapshot is kept', 90, 1),
  VIEW_RELOAD_INTERVAL_MS: int("how often the check's in-memory views of active deployments and builds reload in full, as a safety net for missed NATS events", 30_000, 1_000),
};

export type RegistryConfig = ReturnType<typeof loadRegistryConfig>;
export const loadRegistryConfig = () => loadConfig(registrySettings);
