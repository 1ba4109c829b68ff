import type { OutboundCall } from '@ota/logging';
import type { ServiceClient } from '@ota/grpc';
import type { artifacts, registry, rollout, telemetry } from '@ota/proto';
import type { Principal } from '../auth/principal';
import type { AccountStore } from '../auth/ports';

/** The four services, as their gRPC clients; `adapters/grpc` makes them, one connection each. */
export interface ServiceClients {
  registry: ServiceClient<typeof registry.RegistryServiceService>;
  artifacts: ServiceClient<typeof artifacts.ArtifactsServiceService>;
  rollout: ServiceClient<typeof rollout.RolloutServiceService>;
  telemetry: ServiceClient<typeof telemetry.TelemetryServiceService>;
}

export interface AuditEntry {
  projectId: string;
  action: string;
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
  /** When the change took effect, where the service that made it says (a deployment's transition); now otherwise. */
  at?: Date;
}

/**
 * Records the audit event of a mutation before the mutation is acknowledged: when `record`
 * resolves, the event is durable; when it rejects, the caller must not hear of success.
 * `adapters/nats` implements it.
 */
export interface AuditLog {
  record(principal: Principal, entry: AuditEntry): Promise<void>;
}

/**
 * The ports a use case may ask for, each narrowed with Pick to the calls it makes: the services'
 * gRPC clients, the gateway's own account store and the audit log. main.ts passes the real ones,
 * tests pass fakes.
 */
export type RegistryPort<K extends keyof ServiceClients['registry']> = Pick<ServiceClients['registry'], K>;
export type RolloutPort<K extends keyof ServiceClients['rollout']> = Pick<ServiceClients['rollout'], K>;
export type ArtifactsPort<K extends keyof ServiceClients['artifacts']> = Pick<ServiceClients['artifacts'], K>;
export type TelemetryPort<K extends keyof ServiceClients['telemetry']> = Pick<ServiceClients['telemetry'], K>;
export type AccountStorePort<K extends keyof AccountStore> = Pick<AccountStore, K>;

/** Every port a use case may ask for; each use case's own ports interface is a narrowing of it. */
export interface UseCasePorts {
  registry: ServiceClients['registry'];
  rollout: ServiceClients['rollout'];
  artifacts: ServiceClients['artifacts'];
  telemetry: ServiceClients['telemetry'];
  tokens: AccountStore;
  users: AccountStore;
  audit: AuditLog;
  /** PATCH_BASES_PER_BUILD (use-cases/patch-preparation.ts). */
  patchBasesPerBuild: number;
}

/** Who asks, and the request id and trace context that every call carries to the services. */
export interface Caller {
  principal: Principal;
  call: OutboundCall;
}
