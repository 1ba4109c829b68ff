import type { Bus } from '@ota/bus';
import type { Logger } from '@ota/logging';
import type { ServiceMetrics } from '@ota/metrics';
import type { AuditLog } from './audit';
import type { ServiceClients } from './clients';
import type { GatewayConfig } from './config';
import type { DownloadUrlSigner } from './download-url';
import type { PlanCache } from './plan-cache';
import type { GatewayStore } from './adapters/mongo/gateway-store';

/** Everything the HTTP app needs, built by main.ts (or a test) and passed to createApp. */
export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  metrics: ServiceMetrics;
  store: GatewayStore;
  clients: ServiceClients;
  bus: Bus;
  audit: AuditLog;
  signer: DownloadUrlSigner;
  plans: PlanCache;
  /** Checks every store and service the gateway needs; throws naming the first that is down. */
  checkReadiness(): Promise<void>;
}
