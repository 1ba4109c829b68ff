import { int, loadConfig } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

export const registrySettings = {
  ...commonServiceSettings({ grpcPort: 50051, metricsPort: 9101, database: 'ota_registry' }),
  HEARTBEAT_RESOLUTION_MS: int(
    'a check that changes nothing the device reports rewrites last_seen (and a repeated outcome last_check_at) only when the stored time is older than this',
    60_000,
    0,
  ),
};

export type RegistryConfig = ReturnType<typeof loadRegistryConfig>;
export const loadRegistryConfig = () => loadConfig(registrySettings);
