import { insertUnique } from '@ota/mongo';
import { DEFERRED_EVENT } from '@ota/vocabulary';
import type { Deferrals, DeviceReport, DeviceReportStore } from '../../domain/ports';
import type { DeviceEventDoc, DeviceReportDoc, RolloutModels } from './models';

/**
 * Each device's accepted reports as it sent them, for its timeline: in the `device_events`
 * documents that carry them (the first report of each status, every failure), and in
 * `device_reports`: the first `offered` report of a device and deployment (its event, which the
 * check stored, carries none), and the repeats that releases before this one stored there.
 */
export class MongoDeviceReportStore implements DeviceReportStore {
  constructor(private readonly models: RolloutModels) {}

  insertFirstReport(report: DeviceReport, once: string = report.status): Promise<boolean> {
    const doc: DeviceReportDoc = {
      // One per device, deployment and status (or stop reason): a repeat collides with it.
      _id: `${report.deploymentId}:${report.deviceUuid}:${once}`,
      report_id: report.id,
      project_id: report.projectId,
      deployment_id: report.deploymentId,
      device_id: report.deviceUuid,
      event: report.event,
      status: report.status,
      build_number: report.buildNumber ?? null,
      reason: report.reason,
      detail_json: report.detailJson,
      created_at: report.createdAt,
      ...(report.deferredUntil ? { deferred_until: report.deferredUntil } : {}),
    };
    return insertUnique(this.models.DeviceReport.collection, doc);
  }

  async deferrals(deploymentId: string, now: Date): Promise<Deferrals> {
    const reports = await this.models.DeviceReport.find({ deployment_id: deploymentId, event: DEFERRED_EVENT }, { device_id: 1, deferred_until: 1, created_at: 1 })
      .sort({ created_at: 1 })
      .lean<Array<Pick<DeviceReportDoc, 'device_id' | 'deferred_until' | 'created_at'>>>();
    // Each device's newest word counts: a later deferral replaces the one before, earlier or not.
    const newest = new Map<string, Date>();
    for (const report of reports) if (report.deferred_until) newest.set(report.device_id, report.deferred_until);
    const ahead = [...newest.values()].filter((until) => until > now);
    return { devices: ahead.length, until: ahead.length > 0 ? new Date(Math.max(...ahead.map((until) => until.getTime()))) : null };
  }

  async lastDeferral(deploymentId: string, deviceUuid: string): Promise<Date | null> {
    const newest = await this.models.DeviceReport.findOne({ deployment_id: deploymentId, device_id: deviceUuid, event: DEFERRED_EVENT }, { deferred_until: 1 })
      .sort({ created_at: -1 })
      .lean<Pick<DeviceReportDoc, 'deferred_until'>>();
    return newest?.deferred_until ?? null;
  }

  async listReports(projectId: string, deviceUuid: string, limit: number, since: Date | undefined): Promise<DeviceReport[]> {
    // The first report of each status rides in its device event; the rest are here. Each side's
    // newest `limit` are read, and the newest `limit` of both are answered.
    const carriedQuery: Record<string, unknown> = { project_id: projectId, device_id: deviceUuid, report_id: { $exists: true } };
    const ownQuery: Record<string, unknown> = { project_id: projectId, device_id: deviceUuid };
    if (since) {
      carriedQuery.at = { $gte: since };
      ownQuery.created_at = { $gte: since };
    }
    const [carried, own] = await Promise.all([
      this.models.DeviceEvent.find(carriedQuery).sort({ at: -1, _id: -1 }).limit(limit).lean<DeviceEventDoc[]>(),
      this.models.DeviceReport.find(ownQuery).sort({ created_at: -1, _id: -1 }).limit(limit).lean<DeviceReportDoc[]>(),
    ]);
    return [...carried.map(reportOfEvent), ...own.map(reportOfDoc)]
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id))
      .slice(0, limit);
  }
}

function reportOfDoc(doc: DeviceReportDoc): DeviceReport {
  return {
    id: doc.report_id ?? doc._id,
    projectId: doc.project_id,
    deploymentId: doc.deployment_id,
    deviceUuid: doc.device_id,
    event: doc.event,
    status: doc.status,
    buildNumber: doc.build_number ?? undefined,
    reason: doc.reason ?? '',
    detailJson: doc.detail_json ?? '',
    createdAt: doc.created_at,
    ...(doc.deferred_until ? { deferredUntil: doc.deferred_until } : {}),
  };
}

/** A report its device event carries (`report_id` set), read as the report document it stands for. */
function reportOfEvent(doc: DeviceEventDoc): DeviceReport {
  return reportOfDoc({
    _id: doc.report_id ?? doc._id,
    project_id: doc.project_id,
    deployment_id: doc.deployment_id,
    device_id: doc.device_id,
    event: doc.event ?? '',
    status: doc.status,
    build_number: doc.build_number ?? null,
    reason: doc.reason,
    detail_json: doc.detail_json ?? '',
    created_at: doc.at,
  });
}
