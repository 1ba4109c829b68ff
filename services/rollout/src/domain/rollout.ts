import { DeploymentCounts } from './deployment-counts';
import { Deployments } from './deployments';
import { DeviceRollout } from './device-rollout';
import type { DeviceStatusCache } from './device-status-cache';
import type { ArtifactCatalog, DeploymentStore, DeviceReportStore, DeviceStateStore, Fleet, HealthTallyStore, OfferSlotStore, RolloutEvents, RolloutViews, StatusCountStore } from './ports';

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
  /** What the health guardrail judges: device health counted by registry's checks. */
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

/**
 * The rollout service's domain: deployments through their lifecycle (deployments.ts), the device
 * side of each (device-rollout.ts), and the counts both keep (deployment-counts.ts).
 */
export class Rollout {
  readonly counts: DeploymentCounts;
  readonly deployments: Deployments;
  readonly devices: DeviceRollout;

  constructor(deps: RolloutDeps) {
    const now = deps.now ?? (() => new Date());
    this.counts = new DeploymentCounts({ store: deps.counts, recountIntervalMs: deps.recountIntervalMs, now, warn: deps.warn });
    this.deployments = new Deployments(deps, this.counts, now);
    this.devices = new DeviceRollout(deps, this.deployments, this.counts, now);
  }
}
