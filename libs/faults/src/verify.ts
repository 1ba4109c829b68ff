import mongoose from 'mongoose';
import type { Ledger, RequestRecord } from './ledger';

/** A span of time during which a process was down (from its kill until the stack served again). */
export interface Outage {
  process: string;
  from: number;
  to: number;
}

/** The processes whose outage may break a connection that is already answering. */
function processesBehind(record: RequestRecord): string[] {
  const gateway = record.gateway === 0 ? 'gateway' : 'gateway-2';
  // A download that has begun streams from S3 through artifacts: once its 200 and headers are
  // sent, losing either can only cut the body short, which the device sees as a broken download.
  return record.path.startsWith('/api/v1/ota/download/') ? [gateway, 'artifacts', 's3rver'] : [gateway];
}

/**
 * The answers that break the suite's promises: no answer before the deadline, a 5xx other than a
 * 503 with Retry-After, or a broken connection that no outage explains.
 */
export function brokenAnswers(ledger: Ledger, outages: readonly Outage[]): RequestRecord[] {
  return ledger.requests.filter((record) => {
    if (record.outcome === 'hang') return true;
    if (record.outcome === 'network') {
      const behind = processesBehind(record);
      return !outages.some((outage) => behind.includes(outage.process) && record.at + record.ms >= outage.from && record.at <= outage.to);
    }
    if (record.outcome >= 500) return record.outcome !== 503 || !record.retryAfter;
    return false;
  });
}

export interface StoredStatusProblems {
  /** Accepted reports with no stored event, or stored more than once. */
  missing: string[];
  duplicated: string[];
  /** `failed` reports: the stored count must lie between the accepted and the sent ones. */
  failuresOutOfRange: string[];
  checked: number;
}

/**
 * Reads rollout's `device_events` and checks every status report that was answered
 * `accepted: true`: each status of a device in a deployment is stored exactly once, and each
 * accepted `failed` report is stored (a report answered with an error may have been stored too, so
 * the stored count is at most the number sent).
 */
export async function checkStoredStatuses(mongodbUri: string, rolloutDatabase: string, ledger: Ledger, deviceUuids: Map<string, string>): Promise<StoredStatusProblems> {
  const connection = await mongoose.createConnection(mongodbUri, { dbName: rolloutDatabase }).asPromise();
  try {
    const events = connection.collection('device_events');
    const problems: StoredStatusProblems = { missing: [], duplicated: [], failuresOutOfRange: [], checked: 0 };
    const accepted = new Set<string>();
    const failures = new Map<string, { accepted: number; sent: number }>();
    for (const report of ledger.statusReports) {
      const uuid = deviceUuids.get(report.deviceId);
      if (!uuid) {
        if (report.accepted) problems.missing.push(`${report.deviceId} (device unknown) ${report.event}`);
        continue;
      }
      const key = `${report.deploymentId}|${uuid}|${report.event}`;
      if (report.event === 'failed') {
        const counts = failures.get(key) ?? { accepted: 0, sent: 0 };
        counts.sent += 1;
        if (report.accepted) counts.accepted += 1;
        failures.set(key, counts);
      }
      if (report.accepted) accepted.add(key);
    }
    for (const key of accepted) {
      const [deploymentId, deviceId, status] = key.split('|') as [string, string, string];
      const stored = await events.countDocuments({ kind: 'status', deployment_id: deploymentId, device_id: deviceId, status });
      problems.checked += 1;
      if (stored === 0) problems.missing.push(key);
      if (stored > 1) problems.duplicated.push(`${key} x${stored}`);
    }
    for (const [key, counts] of failures) {
      const [deploymentId, deviceId] = key.split('|') as [string, string];
      const stored = await events.countDocuments({ kind: 'failure', deployment_id: deploymentId, device_id: deviceId });
      if (stored < counts.accepted || stored > counts.sent) problems.failuresOutOfRange.push(`${key}: stored ${stored}, accepted ${counts.accepted}, sent ${counts.sent}`);
    }
    return problems;
  } finally {
    await connection.close();
  }
}

/** Counts answers by endpoint and outcome, for the suite's report. */
export function summarize(ledger: Ledger): string {
  const rows = new Map<string, Map<string, number>>();
  for (const record of ledger.requests) {
    const endpoint = `${record.method} ${record.path}`;
    const row = rows.get(endpoint) ?? new Map<string, number>();
    row.set(String(record.outcome), (row.get(String(record.outcome)) ?? 0) + 1);
    rows.set(endpoint, row);
  }
  return [...rows]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([endpoint, row]) => `${endpoint}: ${[...row].map(([outcome, count]) => `${outcome}=${count}`).join(' ')}`)
    .join('\n');
}

/**
 * Registry's side of the status path: each device's `current_build_number` is the highest build of
 * its accepted `confirmed` reports (builds only rise, and no other event changes it).
 */
export function wrongBuilds(ledger: Ledger, devices: ReadonlyArray<{ device_id: string; current_build_number: number }>): string[] {
  const confirmed = new Map<string, number>();
  for (const report of ledger.statusReports) {
    if (report.accepted && report.event === 'confirmed' && report.buildNumber !== undefined) {
      confirmed.set(report.deviceId, Math.max(confirmed.get(report.deviceId) ?? 0, report.buildNumber));
    }
  }
  return devices
    .filter((device) => confirmed.has(device.device_id) && confirmed.get(device.device_id) !== device.current_build_number)
    .map((device) => `${device.device_id}: registry has build ${device.current_build_number}, accepted confirmed ${confirmed.get(device.device_id)}`);
}
