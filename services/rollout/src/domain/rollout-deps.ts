import type { DeviceStatusCache } from './device-status-cache';
import type { ArtifactCatalog, DeploymentStore, DeviceReportStore, DeviceStateStore, Fleet, HealthTallyStore, OfferSlotStore, RolloutEvents, RolloutViews, StatusCountStore } from './ports';

/** What the rollout domain is built from: its stores and the services and buses around it (main.ts wires them). */
export interface RolloutDeps {
  deployments: DeploymentStore;
  deviceStates: DeviceStateStore;
  reports: DeviceReportStore;
  /** Each deployment's counts, kept as reports arrive (domain/deployment-counts.ts). */
  counts: StatusCountStore;
  /** How often a deployment whose counts keep changing is counted afresh from its events. */
  recountIntervalMs: number;
  catalog: ArtifactCatalog;
  fleet: Fleet;
  /** What the health guardrail judges: device health counted by registry's checks, and trials that crashed. */
  health: HealthTallyStore;
  /** The new offers of each minute, for the offer caps. */
  offerSlots: OfferSlotStore;
  views: RolloutViews;
  events: RolloutEvents;
  statusCache: DeviceStatusCache;
  /** Logs work that failed off a request's path (a later run makes it good). */
  warn: (error: unknown, message: string) => void;
  now?: () => Date;
}
