import type { Principal } from '../auth/principal';
import type { AuditLog } from '../audit';
import type { ServiceClients } from '../clients';
import type { GatewayStore } from '../adapters/mongo/gateway-store';

/**
 * The ports a use case may ask for, each narrowed with Pick to the calls it makes: the services'
 * gRPC clients, the gateway's own token store and the audit log. main.ts passes the real ones,
 * tests pass fakes.
 */
export type RegistryPort<K extends keyof ServiceClients['registry']> = Pick<ServiceClients['registry'], K>;
export type RolloutPort<K extends keyof ServiceClients['rollout']> = Pick<ServiceClients['rollout'], K>;
export type ArtifactsPort<K extends keyof ServiceClients['artifacts']> = Pick<ServiceClients['artifacts'], K>;
export type TelemetryPort<K extends keyof ServiceClients['telemetry']> = Pick<ServiceClients['telemetry'], K>;
export type GatewayStorePort<K extends keyof GatewayStore> = Pick<GatewayStore, K>;
export type AuditPort = Pick<AuditLog, 'record'>;

/** Every port a use case may ask for; each use case's own ports interface is a narrowing of it. */
export interface UseCasePorts {
  registry: ServiceClients['registry'];
  rollout: ServiceClients['rollout'];
  artifacts: ServiceClients['artifacts'];
  telemetry: ServiceClients['telemetry'];
  tokens: GatewayStore;
  users: GatewayStore;
  audit: AuditLog;
}

/** Who asks, and the request id that every call carries to the services. */
export interface Caller {
  principal: Principal;
  requestId: string;
}
