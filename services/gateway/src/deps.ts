import type { Logger } from '@ota/logging';
import type { ServiceMetrics } from '@ota/metrics';
import type { PlanCache } from './auth/plan-cache';
import type { AccountStore } from './auth/ports';
import type { GatewayConfig } from './config';
import type { DownloadUrlSigner } from './http/download-url';
import type { IdempotencyStore } from './http/idempotency';
import type { AuditLog, ServiceClients } from './use-cases/ports';
import type { IdentityProvider, SignInSessions } from './auth/sign-in';

/** Everything the HTTP app needs, built by main.ts (or a test) and passed to createApp. */
export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  metrics: ServiceMetrics;
  store: AccountStore;
  clients: ServiceClients;
  audit: AuditLog;
  signer: DownloadUrlSigner;
  /** Presigned object-storage URLs for offers, when DOWNLOAD_URLS is `presigned`; absent otherwise. */
  presignedDownloads?: { urlOf(storageKey: string): Promise<string | undefined> };
  plans: PlanCache;
  /** The answers kept for Idempotency-Keys of uploads and releases. */
  idempotency: IdempotencyStore;
  /** Single sign-on, when OIDC_ISSUER is set: the provider, and what confirms its sessions. */
  signIn?: { provider: IdentityProvider; sessions: SignInSessions };
  /** Checks every store and service the gateway needs; throws naming the first that is down. */
  checkReadiness(): Promise<void>;
}
