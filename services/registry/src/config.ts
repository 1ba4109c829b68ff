import { int, loadConfig, str } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

export const registrySettings = {
  ...commonServiceSettings({ grpcPort: 50051, metricsPort: 9101, database: 'ota_registry' }),
  ROLLOUT_ADDR: str("address of the rollout service (the check's views load active deployments from it, and it confirms each offer)", '127.0.0.1:50053'),
  ARTIFACTS_ADDR: str("address of the artifacts service (the check's views load the builds' summaries from it)", '127.0.0.1:50052'),
  VIEW_RELOAD_INTERVAL_MS: int("how often the check's in-memory views of active deployments and builds reload in full, as a safety net for missed NATS events", 30_000, 1_000),
};

export type RegistryConfig = ReturnType<typeof loadRegistryConfig>;
export const loadRegistryConfig = () => loadConfig(registrySettings);
