import { getHeapStatistics } from 'node:v8';
import { ConfigError, int, loadConfig, str } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';
import { statusCacheOverHeap } from './domain/device-status-cache';

export const rolloutSettings = {
  ...commonServiceSettings({ grpcPort: 50053, metricsPort: 9103, database: 'ota_rollout' }),
  ARTIFACTS_ADDR: str('address of the artifacts service', '127.0.0.1:50052'),
  REGISTRY_ADDR: str('address of the registry service (deployment previews read the fleet from it)', '127.0.0.1:50051'),
  DEVICE_STATUS_CACHE_ENTRIES: int('how many (deployment, device) statuses each replica keeps in memory: about 630 B of heap an entry; rollout refuses to start when a full cache and 160 MiB besides would not fit its heap', 500_000, 1),
  VIEW_RELOAD_INTERVAL_MS: int('how often the in-memory views reload in full, as a safety net for missed events', 30_000, 1_000),
  STATUS_COUNTS_FLUSH_MS: int("how often each replica writes the deployment count changes of the reports it stored; other replicas' summaries see them this much later", 1_000, 100),
  STATUS_COUNTS_COMPACT_INTERVAL_MS: int('how often each replica folds the count changes it wrote into a snapshot of each deployment\'s counts', 10_000, 1_000),
  STATUS_RECOUNT_INTERVAL_MS: int("how often a deployment whose counts keep changing is counted afresh from its stored events, correcting drift; a recount reads every event of the deployment", 3_600_000, 10_000),
  SUPERVISE_INTERVAL_MS: int('how often each replica judges the guardrails of active deployments (silent devices, reason windows) and ramps staged ones whose stage is due', 10_000, 100),
};

export type RolloutConfig = ReturnType<typeof loadRolloutConfig>;
export const loadRolloutConfig = () => loadConfig(rolloutSettings);

/** The configuration rollout serves with: also refuses a status cache its heap could not hold when full. */
export const loadServingRolloutConfig = (heapLimitBytes = getHeapStatistics().heap_size_limit) => {
  const config = loadRolloutConfig();
  const overHeap = statusCacheOverHeap(config.DEVICE_STATUS_CACHE_ENTRIES, heapLimitBytes);
  if (overHeap) throw new ConfigError(`invalid configuration:\n  ${overHeap}`);
  return config;
};
