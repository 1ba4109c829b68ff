import { SUBJECTS, type Bus, type ArtifactChangedEvent, type DeploymentChangedEvent, type DeviceForgottenEvent, type DeviceStatusChangedEvent } from '@ota/bus';
import type { Logger } from '@ota/logging';
import type { DeviceStatusCache } from '../../domain/device-status-cache';
import type { RolloutEvents } from '../../domain/ports';
import type { InMemoryRolloutViews } from '../../views/rollout-views';
import { summaryOfEvent } from '../artifacts-client';
import type { AutomaticAudit } from './automatic-audit';

/** What rollout tells the other replicas (core NATS) and telemetry (the automatic audit, JetStream). */
export function natsRolloutEvents(bus: Bus, automaticAudit: AutomaticAudit): RolloutEvents {
  return {
    deploymentChanged: (deployment) =>
      bus.publish<DeploymentChangedEvent>(SUBJECTS.deploymentChanged, {
        id: deployment.id,
        project_id: deployment.projectId,
        state: deployment.state,
        updated_at: deployment.updatedAt.toISOString(),
      }),
    deviceStatusChanged: (deploymentId, deviceId, status) =>
      bus.publish<DeviceStatusChangedEvent>(SUBJECTS.deviceStatusChanged, {
        deployment_id: deploymentId,
        device_id: deviceId,
        status: status.status,
        rank: status.rank,
        rolled_back: status.rolledBack,
      }),
    deviceForgotten: (deviceId) => bus.publish<DeviceForgottenEvent>(SUBJECTS.deviceForgotten, { device_id: deviceId }),
    changedByItself: (deployment, action, details) => automaticAudit.record(deployment, action, details),
  };
}

/**
 * Keeps this replica's views and status cache in step with what artifacts and the other rollout
 * replicas publish. Call it before the views' first load, so that nothing that changes during the
 * load is missed.
 */
export function followPeers(bus: Bus, views: InMemoryRolloutViews, statusCache: DeviceStatusCache, logger: Logger): void {
  bus.subscribe<ArtifactChangedEvent>(SUBJECTS.artifactChanged, (event) => views.artifactSeen(summaryOfEvent(event)));
  bus.subscribe<DeploymentChangedEvent>(SUBJECTS.deploymentChanged, (event) => views.deploymentChanged(event.id));
  bus.subscribe<DeviceStatusChangedEvent>(SUBJECTS.deviceStatusChanged, (event) => {
    statusCache.merge(event.deployment_id, event.device_id, { status: event.status, rank: event.rank, rolledBack: event.rolled_back });
  });
  bus.subscribe<DeviceForgottenEvent>(SUBJECTS.deviceForgotten, (event) => statusCache.forgetDevice(event.device_id));
  // Core subscriptions missed whatever was published while NATS was away: forget the cached
  // statuses (what is not cached is read from the store again) and reload the views at once
  // rather than at the next periodic reload.
  bus.onReconnect(() => {
    statusCache.clear();
    views.reload().catch((error: unknown) => logger.warn({ err: error }, 'view reload after reconnect failed; the periodic reload retries'));
  });
}
