import { createServiceClient } from '@ota/grpc';
import type { ServiceMetrics } from '@ota/metrics';
import { artifacts, registry, rollout, telemetry } from '@ota/proto';
import type { GatewayConfig } from '../../config';
import type { ServiceClients } from '../../use-cases/ports';

/** Long-lived gRPC clients, one connection per service, shared by every request. */
export function createServiceClients(config: GatewayConfig, metrics: ServiceMetrics): ServiceClients {
  const settings = { defaultTimeoutMs: config.GRPC_CALL_TIMEOUT_MS, streamTimeoutMs: config.GRPC_STREAM_TIMEOUT_MS, metrics };
  return {
    registry: createServiceClient('ota.registry.v1.RegistryService', registry.RegistryServiceService, config.REGISTRY_ADDR, settings),
    artifacts: createServiceClient('ota.artifacts.v1.ArtifactsService', artifacts.ArtifactsServiceService, config.ARTIFACTS_ADDR, settings),
    rollout: createServiceClient('ota.rollout.v1.RolloutService', rollout.RolloutServiceService, config.ROLLOUT_ADDR, settings),
    telemetry: createServiceClient('ota.telemetry.v1.TelemetryService', telemetry.TelemetryServiceService, config.TELEMETRY_ADDR, settings),
  };
}

export function closeServiceClients(clients: ServiceClients): void {
  for (const client of Object.values(clients)) client.close();
}
