// A device's lifecycle event (docs/api.md, "Status reports"), taken by registry in one call from
// the gateway: what it changes on the device record, and the order of the two writes it makes.
import type { DecisionDeployment, DecisionViews } from '@ota/decision';
import { invalidArgument, permissionDenied } from '@ota/errors';
import { CHECK_MESSAGES, DEFERRED_EVENT, rankOf, statusOfEvent, STOPPED_EVENT } from '@ota/vocabulary';
import { deviceReportChange } from './device-report-change';
import type { Device, StatusReportWrite } from './model';
import type { Registry } from './registry';
import type { OutboundCall } from '@ota/logging';

/** Rollout, as a status report needs it: it stores the event (rollout keeps owning rollout statuses). */
export interface DeviceEventLedger {
  recordDeviceEvent(event: {
    projectId: string;
    deploymentId: string;
    /** The device's UUID. */
    deviceUuid: string;
    event: string;
    buildNumber?: number;
    reason: string;
    detailJson: string;
    deferredUntil?: Date;
  }, call: OutboundCall): Promise<{ accepted: boolean; finalStatus: string }>;
}

export interface StatusReportDeps {
  registry: Pick<Registry, 'getDevice' | 'applyStatusReport' | 'deferOffer'>;
  /** Only which deployments are active: a report on one of them is known to name a deployment of the project. */
  views: Pick<DecisionViews<DecisionDeployment>, 'activeDeployments'>;
  events: DeviceEventLedger;
}

export interface StatusReportInput {
  projectId: string;
  /** The unit's own device_id string. */
  deviceId: string;
  /** The report came with the shared project token: it may not speak for a device with its own token. */
  viaProjectToken: boolean;
  deploymentId: string;
  event: string;
  buildNumber?: number;
  reason: string;
  detailJson: string;
  /** With the deferred event: when the device wants the offer again. */
  deferredUntil?: Date;
}

/**
 * A status report (docs/architecture.md, "A status report, hop by hop"). On an active deployment,
 * which this replica's views know belongs to the project, registry writes the device first, in one
 * conditional update that also holds the token rule, and rollout stores the event after it: no
 * read, one update, rollout's insert. The device is read only when the update wrote nothing, to
 * say why. On any other deployment rollout is asked first (it knows whether the deployment
 * exists), so the device is read first for the token rule, as nothing may be stored for a refused
 * report.
 */
export async function reportDeviceStatus(deps: StatusReportDeps, input: StatusReportInput, call: OutboundCall): Promise<{ accepted: boolean; finalStatus: string }> {
  const store = (device: Pick<Device, 'id'>) =>
    deps.events.recordDeviceEvent({
      projectId: input.projectId,
      deploymentId: input.deploymentId,
      deviceUuid: device.id,
      event: input.event,
      buildNumber: input.buildNumber,
      reason: input.reason,
      detailJson: input.detailJson,
      deferredUntil: input.deferredUntil,
    }, call);
  // A deferral moves no status either (docs/api.md, "Deferral"): rollout stores the line of the
  // timeline first (404 for a deployment not of the project), then the device holds the deferral
  // that its checks are decided with.
  if (input.event === DEFERRED_EVENT) {
    if (!input.deferredUntil) throw invalidArgument('deferred_until is required with deferred');
    const device = await reportingDevice(deps, input);
    const result = await store(device);
    await deps.registry.deferOffer(device.id, { deploymentId: input.deploymentId, until: input.deferredUntil });
    return result;
  }
  // A stop moves no status (docs/api.md, "Stopping devices mid-update"): the device is read for the
  // token rule, and rollout stores the line of its timeline.
  if (input.event === STOPPED_EVENT) return store(await reportingDevice(deps, input));
  const status = statusOfEvent(input.event);
  if (!status) throw invalidArgument(`unknown event "${input.event}"`);
  const write = (reached: string): StatusReportWrite => ({
    projectId: input.projectId,
    deviceId: input.deviceId,
    viaProjectToken: input.viaProjectToken,
    deploymentId: input.deploymentId,
    rank: rankOf(reached),
    change: deviceReportChange(reached, input.reason, input.event === 'confirmed' ? input.buildNumber : undefined),
  });

  const onActiveDeployment = deps.views.activeDeployments(input.projectId).some((deployment) => deployment.id === input.deploymentId);
  if (onActiveDeployment) {
    const written = await deps.registry.applyStatusReport(write(status));
    // Nothing written: no such device, a refused token, or a status below the stored one (which
    // rollout stores all the same, for the device's timeline).
    const device = written ?? (await reportingDevice(deps, input));
    return store(device);
  }
  const device = await reportingDevice(deps, input);
  const result = await store(device);
  await deps.registry.applyStatusReport(write(result.finalStatus));
  return result;
}

/** The reporting device, read: missing is 404, and a device with its own token refuses the project token. */
async function reportingDevice(deps: StatusReportDeps, input: StatusReportInput): Promise<Device> {
  const device = await deps.registry.getDevice(input.projectId, { deviceId: input.deviceId });
  if (device.tokenRequired && input.viaProjectToken) throw permissionDenied(CHECK_MESSAGES.token_required);
  return device;
}
