// What a status report changes on the device record (docs/api.md, "Device"), for the status path
// and for the previous release's ApplyDeviceReport.

const FAILURE_EVENTS = new Set(['failed', 'rolled_back']);

export interface DeviceReportChange {
  lastOtaStatus: string;
  /**
   * Set on failures; cleared when the device takes a later status (one ranked higher, or of a
   * newer deployment), so the dashboard never shows a stale reason.
   */
  lastOtaReason: string;
  currentBuildNumber?: number;
}

export function deviceReportChange(event: string, reason: string, buildNumber: number | undefined): DeviceReportChange {
  const change: DeviceReportChange = {
    lastOtaStatus: event,
    lastOtaReason: FAILURE_EVENTS.has(event) ? reason : '',
  };
  if (event === 'confirmed' && buildNumber !== undefined) change.currentBuildNumber = buildNumber;
  return change;
}
