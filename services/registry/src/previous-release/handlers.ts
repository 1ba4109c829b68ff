// PREVIOUS RELEASE: deleted by the next release (docs/architecture.md, "What the next release
// deletes"). The gRPC methods registry serves only for gateways of the release before.
import type { Handlers } from '@ota/grpc';
import { invalidArgument, notFound } from '@ota/errors';
import { registry as pb } from '@ota/proto';
import { deviceReportChange } from '../domain/device-report-change';
import type { RegistryStore } from '../domain/ports';
import { deviceMessage, reportedProfileOf, type PreviousReleaseMethods } from '../grpc/registry-handlers';
import { lookUpForCheck, recordWholeCheck } from './three-call-check';

const OUTCOME = {
  known: pb.CheckInOutcome.CHECK_IN_OUTCOME_KNOWN,
  registered: pb.CheckInOutcome.CHECK_IN_OUTCOME_REGISTERED,
  inactive: pb.CheckInOutcome.CHECK_IN_OUTCOME_INACTIVE,
  over_limit: pb.CheckInOutcome.CHECK_IN_OUTCOME_OVER_LIMIT,
  token_required: pb.CheckInOutcome.CHECK_IN_OUTCOME_TOKEN_REQUIRED,
} as const;

export function previousReleaseHandlers(store: RegistryStore, warn: (error: unknown, message: string) => void): Pick<Handlers<typeof pb.RegistryServiceService>, PreviousReleaseMethods> {
  return {
    async checkInDevice(request) {
      const result = await lookUpForCheck(
        store,
        {
          projectId: request.projectId,
          ownerId: request.ownerId,
          deviceId: request.deviceId,
          viaProjectToken: request.viaProjectToken,
          maxDevices: request.maxDevices,
          reported: reportedProfileOf(request.reported),
        },
        new Date(),
      );
      return {
        outcome: OUTCOME[result.outcome],
        device: result.outcome === 'over_limit' ? undefined : deviceMessage(result.device),
      };
    },
    async recordCheck(request) {
      const event = request.event;
      if (!event) throw invalidArgument('event is required');
      const record = {
        projectId: request.projectId,
        id: request.id,
        checkCount: request.checkCount,
        reported: request.heartbeat ? reportedProfileOf(request.reported) : undefined,
        record: {
          id: event.id,
          projectId: request.projectId,
          deviceId: event.deviceId,
          createdAt: event.createdAt ?? new Date(),
          decision: event.decision,
          status: event.status,
          deploymentId: event.deploymentId,
          artifactBuildNumber: event.artifactBuildNumber ?? null,
          reportedBuildNumber: event.reportedBuildNumber ?? null,
          reportedVersion: event.reportedVersion,
          message: event.message,
        },
      };
      await recordWholeCheck(store, record, (error) => warn(error, `trimming the decision records of device ${request.id} failed; its next 20th check trims them`));
      return {};
    },
    /** The status path of the release before: one update of the device, reading nothing. */
    async applyDeviceReport(request) {
      const change = deviceReportChange(request.event, request.reason, request.buildNumber);
      if (!(await store.applyDeviceReport(request.projectId, request.id, change))) throw notFound('device not found');
      return {};
    },
  };
}
