// What a lifecycle event reported to the status endpoint changes on the device record itself.

const FAILURE_EVENTS = new Set(['failed', 'rolled_back']);

export interface DeviceReportChange {
  lastOtaStatus: string;
  /** Set on failures; cleared by any later event so the dashboard never shows a stale reason. */
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
