import type { DeviceReport, DeviceReportStore } from '../../domain/ports';
import type { DeviceReportDoc, RolloutModels } from './models';

/** Each device's accepted reports as it sent them (collection `device_reports`), for its timeline. */
export class MongoDeviceReportStore implements DeviceReportStore {
  constructor(private readonly models: RolloutModels) {}

  async insertReport(report: DeviceReport): Promise<void> {
    const doc: DeviceReportDoc = {
      _id: report.id,
      project_id: report.projectId,
      deployment_id: report.deploymentId,
      device_id: report.deviceId,
      event: report.event,
      status: report.status,
      build_number: report.buildNumber ?? null,
      reason: report.reason,
      detail_json: report.detailJson,
      created_at: report.createdAt,
    };
    await this.models.DeviceReport.collection.insertOne(doc as never);
  }

  async listReports(projectId: string, deviceId: string, limit: number, since: Date | undefined): Promise<DeviceReport[]> {
    const query: Record<string, unknown> = { project_id: projectId, device_id: deviceId };
    if (since) query.created_at = { $gte: since };
    const docs = await this.models.DeviceReport.find(query).sort({ created_at: -1, _id: -1 }).limit(limit).lean<DeviceReportDoc[]>();
    return docs.map((doc) => ({
      id: doc._id,
      projectId: doc.project_id,
      deploymentId: doc.deployment_id,
      deviceId: doc.device_id,
      event: doc.event,
      status: doc.status,
      buildNumber: doc.build_number ?? undefined,
      reason: doc.reason ?? '',
      detailJson: doc.detail_json ?? '',
      createdAt: doc.created_at,
    }));
  }

  async trimReports(deviceId: string, keep: number): Promise<void> {
    const older = await this.models.DeviceReport.find({ device_id: deviceId }, { _id: 1 }).sort({ created_at: -1, _id: -1 }).skip(keep).lean<Array<{ _id: string }>>();
    if (older.length > 0) await this.models.DeviceReport.deleteMany({ _id: { $in: older.map((doc) => doc._id) } });
  }
}
