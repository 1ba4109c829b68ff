import { loadConfig } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

export const registrySettings = {
  ...commonServiceSettings({ grpcPort: 50051, metricsPort: 9101, database: 'ota_registry' }),
};

export type RegistryConfig = ReturnType<typeof loadRegistryConfig>;
export const loadRegistryConfig = () => loadConfig(registrySettings);
