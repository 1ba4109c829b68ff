import { loadConfig } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

// Registry talks to no one over NATS: every check's outcome reaches it in the check itself.
const { NATS_URL: _unused, ...settings } = commonServiceSettings({ grpcPort: 50051, metricsPort: 9101, database: 'ota_registry' });

export const registrySettings = settings;

export type RegistryConfig = ReturnType<typeof loadRegistryConfig>;
export const loadRegistryConfig = () => loadConfig(registrySettings);
