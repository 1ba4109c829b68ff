import type { Logger } from '@ota/logging';
import { readinessGauge, startMetricsServer, type ServiceMetrics } from '@ota/metrics';
import type { Stopper } from './lifecycle';
import { GrpcServer } from './server';

export interface ServeSettings {
  GRPC_HOST: string;
  GRPC_PORT: number;
  METRICS_PORT: number;
  METRICS_HOST: string;
  SHUTDOWN_GRACE_MS: number;
}

/**
 * The last step of every service's start: serve gRPC (with health) and /metrics, and return the
 * stoppers that take both down again, gRPC first so in-flight calls can finish.
 */
export async function serveGrpc(
  deps: { logger: Logger; metrics: ServiceMetrics; settings: ServeSettings },
  register: (server: GrpcServer) => void,
): Promise<Stopper[]> {
  const { logger, metrics, settings } = deps;
  const server = new GrpcServer({ logger, metrics });
  register(server);
  const port = await server.listen(`${settings.GRPC_HOST}:${settings.GRPC_PORT}`);
  // The probe asks the gRPC health service, which serves from here until shutdown.
  let serving = true;
  readinessGauge(metrics, () => serving);
  const metricsServer = await startMetricsServer(metrics.registry, settings.METRICS_PORT, settings.METRICS_HOST);
  logger.info({ port, metricsPort: settings.METRICS_PORT }, 'serving');
  return [
    () => new Promise<void>((resolve) => metricsServer.close(() => resolve())),
    () => {
      serving = false;
      return server.shutdown(settings.SHUTDOWN_GRACE_MS);
    },
  ];
}
