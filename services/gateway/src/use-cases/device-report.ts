import type { OutboundCall } from '@ota/logging';
import type { RegistryPort } from './ports';

/** What the device reported (docs/api.md, "Status reports"), as the route validated it. */
export interface StatusReport {
  deployment_id: string;
  event: string;
  build_number?: number;
  reason?: string | null;
  detail?: Record<string, unknown> | null;
  /** With the deferred event: when the device wants the offer again (ISO 8601). */
  deferred_until?: string;
}

/** What a status report needs from the services around the gateway; tests pass fakes. */
export interface DeviceReportPorts {
  registry: RegistryPort<'reportDeviceStatus'>;
}

export interface DeviceReport {
  projectId: string;
  /** The device_id the report speaks for. */
  deviceId: string;
  /** The report came with the shared project token, not the device's own. */
  viaProjectToken: boolean;
  body: StatusReport;
  call: OutboundCall;
}

/**
 * A lifecycle event (docs/api.md, "Status reports"), in one call: registry writes the device and
 * has rollout store the event (docs/architecture.md, "A status report, hop by hop"); `accepted` is
 * answered only after both stores wrote, and a device with its own token may not report with the
 * project token.
 */
export async function reportDeviceStatus(ports: DeviceReportPorts, report: DeviceReport): Promise<{ accepted: boolean; final_status: string }> {
  const { body } = report;
  const result = await ports.registry.reportDeviceStatus(
    {
      projectId: report.projectId,
      deviceId: report.deviceId,
      viaProjectToken: report.viaProjectToken,
      deploymentId: body.deployment_id,
      event: body.event,
      buildNumber: body.build_number,
      reason: body.reason ?? '',
      detailJson: body.detail ? JSON.stringify(body.detail) : '',
      deferredUntil: body.deferred_until === undefined ? undefined : new Date(body.deferred_until),
    },
    report.call,
  );
  return { accepted: result.accepted, final_status: result.finalStatus };
}
