import type { RequestTrace } from '@ota/logging';
import { permissionDenied } from '@ota/errors';
import { CHECK_MESSAGES } from '@ota/vocabulary';
import type { RegistryPort, RolloutPort } from './ports';

/** What the device reported (docs/api.md, "Status reports"), as the route validated it. */
export interface StatusReport {
  deployment_id: string;
  event: string;
  build_number?: number;
  reason?: string | null;
  detail?: Record<string, unknown> | null;
}

/** What a status report needs from the services around the gateway; tests pass fakes. */
export interface DeviceReportPorts {
  registry: RegistryPort<'getDevice' | 'applyDeviceReport'>;
  rollout: RolloutPort<'recordDeviceEvent'>;
}

export interface DeviceReport {
  projectId: string;
  /** The device_id the report speaks for. */
  deviceId: string;
  /** Set when the device's own token was used: it names the device, so nothing is read. */
  deviceUuid?: string;
  body: StatusReport;
  trace: RequestTrace;
}

/**
 * A lifecycle event (docs/api.md, "Status reports"): rollout stores it (the status never moves backwards), then
 * registry applies it to the device; `accepted` is answered only after both stores wrote. With the
 * project token, the device is read first: a device with its own token may not report with it.
 */
export async function reportDeviceStatus(ports: DeviceReportPorts, report: DeviceReport): Promise<{ accepted: boolean; final_status: string }> {
  const { body, projectId, trace } = report;
  let deviceUuid = report.deviceUuid;
  if (deviceUuid === undefined) {
    const { device } = await ports.registry.getDevice({ projectId, id: '', deviceId: report.deviceId }, trace);
    if (device!.tokenRequired) throw permissionDenied(CHECK_MESSAGES.token_required);
    deviceUuid = device!.id;
  }
  const reason = body.reason ?? '';
  const result = await ports.rollout.recordDeviceEvent(
    {
      projectId,
      deploymentId: body.deployment_id,
      deviceId: deviceUuid,
      event: body.event,
      buildNumber: body.build_number,
      reason,
      detailJson: body.detail ? JSON.stringify(body.detail) : '',
    },
    trace,
  );
  await ports.registry.applyDeviceReport(
    { projectId, id: deviceUuid, event: result.finalStatus, reason, buildNumber: body.event === 'confirmed' ? body.build_number : undefined },
    trace,
  );
  return { accepted: result.accepted, final_status: result.finalStatus };
}
