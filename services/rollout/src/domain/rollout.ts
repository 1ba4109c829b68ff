import { DeploymentCounts } from './deployment-counts';
import { Deployments } from './deployments';
import { DeviceRollout } from './device-rollout';
import type { RolloutDeps } from './rollout-deps';

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
