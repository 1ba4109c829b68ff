import { EVENTS, type Bus } from '@ota/bus';
import type { Logger } from '@ota/logging';
import type { DeviceStatusCache } from '../../domain/device-status-cache';
import type { RolloutEvents } from '../../domain/ports';
import type { InMemoryDecisionViews } from '@ota/decision';
import { followViewEvents } from '@ota/decision-views';
import type { Deployment } from '../../domain/model';
import type { AutomaticAudit } from './automatic-audit';
import type { RolloutMetrics } from '../rollout-metrics';

/** How long a start, resume or ramp waits for the replicas that hold views to apply it. */
const VIEW_ACKNOWLEDGEMENT = { stallMs: 250, maxWaitMs: 2_000 };

/** What rollout tells the other replicas (core NATS) and telemetry (the automatic audit, JetStream). */
export function natsRolloutEvents(bus: Bus, automaticAudit: AutomaticAudit, metrics: Pick<RolloutMetrics, 'pausedByGuardrail'>): RolloutEvents {
  return {
    deploymentChanged: async (deployment) => {
      const event = { id: deployment.id, projectId: deployment.projectId, state: deployment.state, updatedAt: deployment.updatedAt };
      // A pause or an end needs no wait: every offer is confirmed by rollout (RecordOffer), and
      // this replica applied it already. A start, resume or ramp is waited for, so that registry's
      // check replicas offer it from the next check on; one that does not answer in time catches
      // up from the event or its periodic reload.
      if (deployment.state !== 'active') return bus.publish(EVENTS.deploymentChanged, event);
      await bus.requestAll(EVENTS.deploymentChanged, event, VIEW_ACKNOWLEDGEMENT).catch(() => undefined);
    },
    deviceStatusChanged: (deploymentId, deviceUuid, status) => bus.publish(EVENTS.deviceStatusChanged, { deploymentId, deviceId: deviceUuid, ...status }),
    deviceForgotten: (deviceUuid) => bus.publish(EVENTS.deviceForgotten, { deviceId: deviceUuid }),
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
export function followPeers(bus: Bus, views: InMemoryDecisionViews<Deployment>, statusCache: DeviceStatusCache, logger: Logger): void {
  followViewEvents(bus, views, logger);
  bus.subscribe(EVENTS.deviceStatusChanged, (event) => {
    statusCache.merge(event.deploymentId, event.deviceId, { status: event.status, rank: event.rank, rolledBack: event.rolledBack });
  });
  bus.subscribe(EVENTS.deviceForgotten, (event) => statusCache.forgetDevice(event.deviceId));
  // Core subscriptions missed whatever was published while NATS was away: forget the cached
  // statuses (what is not cached is read from the store again).
  bus.onReconnect(() => statusCache.clear());
}
