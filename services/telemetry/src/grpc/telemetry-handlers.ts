import type { Handlers } from '@ota/grpc';
import { type telemetry as pb } from '@ota/proto';
import type { Telemetry } from '../domain/telemetry';

export function telemetryHandlers(telemetry: Telemetry): Handlers<typeof pb.TelemetryServiceService> {
  return {
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
