import type { Handlers } from '@ota/grpc';
import { telemetry as pb } from '@ota/proto';
import type { Telemetry } from '../domain/telemetry';

export function telemetryHandlers(telemetry: Telemetry): Handlers<typeof pb.TelemetryServiceService> {
  return {
    async listDecisions(request) {
      const records = await telemetry.listDecisions({
        projectId: request.projectId,
        deviceUuid: request.deviceId,
        limit: request.limit,
        since: request.since,
        decision: request.decision || undefined,
        status: request.status || undefined,
      });
      return {
        decisions: records.map((record) => ({
          id: record.id,
          projectId: record.projectId,
          deviceId: record.deviceId,
          createdAt: record.createdAt,
          decision: record.decision,
          status: record.status,
          deploymentId: record.deploymentId,
          artifactBuildNumber: record.artifactBuildNumber ?? undefined,
          reportedBuildNumber: record.reportedBuildNumber ?? undefined,
          reportedVersion: record.reportedVersion,
          message: record.message,
        })),
      };
    },
    async deleteDeviceDecisions(request) {
      await telemetry.deleteDecisions(request.projectId, request.deviceId);
      return {};
    },
    async listAuditEvents(request) {
      const records = await telemetry.listAudit(request.projectId, request.limit || 100, request.beforeId);
      return {
        events: records.map((record) => ({
          id: record.id,
          projectId: record.projectId,
          action: record.action,
          actorType: record.actorType,
          actorId: record.actorId,
          tokenPrefix: record.tokenPrefix,
          targetType: record.targetType,
          targetId: record.targetId,
          createdAt: record.createdAt,
          detailsJson: JSON.stringify(record.details),
        })),
      };
    },
  };
}
