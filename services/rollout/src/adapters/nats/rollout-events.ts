import { EVENTS, type Bus } from '@ota/bus';
import type { Logger } from '@ota/logging';
import type { DeviceStatusCache } from '../../domain/device-status-cache';
import type { RolloutEvents } from '../../domain/ports';
import type { InMemoryRolloutViews } from '../rollout-views';
import { summaryOfMessage } from '../grpc/grpc-artifact-catalog';
import type { AutomaticAudit } from './automatic-audit';
import type { RolloutMetrics } from '../rollout-metrics';

/** What rollout tells the other replicas (core NATS) and telemetry (the automatic audit, JetStream). */
export function natsRolloutEvents(bus: Bus, automaticAudit: AutomaticAudit, metrics: Pick<RolloutMetrics, 'pausedByGuardrail'>): RolloutEvents {
  return {
    deploymentChanged: (deployment) =>
      bus.publish(EVENTS.deploymentChanged, { id: deployment.id, projectId: deployment.projectId, state: deployment.state, updatedAt: deployment.updatedAt }),
    deviceStatusChanged: (deploymentId, deviceId, status) => bus.publish(EVENTS.deviceStatusChanged, { deploymentId, deviceId, ...status }),
    deviceForgotten: (deviceId) => bus.publish(EVENTS.deviceForgotten, { deviceId }),
    changedByItself: (deployment, action, details) => {
      if (action === 'deployment.paused') metrics.pausedByGuardrail(deployment);
      automaticAudit.record(deployment, action, details);
    },
  };
}

/**
 * Keeps this replica's views and status cache in step with what artifacts and the other rollout
 * replicas publish. Call it before the views' first load, so that nothing that changes during the
 * load is missed.
 */
export function followPeers(bus: Bus, views: InMemoryRolloutViews, statusCache: DeviceStatusCache, logger: Logger): void {
  bus.subscribe(EVENTS.artifactChanged, (artifact) => views.artifactSeen(summaryOfMessage(artifact)));
  bus.subscribe(EVENTS.deploymentChanged, (event) => views.deploymentChanged(event.id));
  bus.subscribe(EVENTS.deviceStatusChanged, (event) => {
    statusCache.merge(event.deploymentId, event.deviceId, { status: event.status, rank: event.rank, rolledBack: event.rolledBack });
  });
  bus.subscribe(EVENTS.deviceForgotten, (event) => statusCache.forgetDevice(event.deviceId));
  // Core subscriptions missed whatever was published while NATS was away: forget the cached
  // statuses (what is not cached is read from the store again) and reload the views at once
  // rather than at the next periodic reload.
  bus.onReconnect(() => {
    statusCache.clear();
    views.reload().catch((error: unknown) => logger.warn({ err: error }, 'view reload after reconnect failed; the periodic reload retries'));
  });
}
