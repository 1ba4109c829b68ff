// PREVIOUS RELEASE: deleted by the next release (docs/architecture.md, "What the next release
// deletes"). DecideOffer, the middle call of the release before's three-call check, served for
// its gateways during an upgrade; registry's CheckDevice answers checks now.
import { offerOf } from '@ota/decision';
import { invalidArgument } from '@ota/errors';
import type { Handlers } from '@ota/grpc';
import { profileOfMessage } from '@ota/manifest';
import type { rollout as pb } from '@ota/proto';
import type { Rollout } from '../domain/rollout';
import type { PreviousReleaseMethods } from '../grpc/rollout-handlers';

export function previousReleaseHandlers(rollout: Rollout): Pick<Handlers<typeof pb.RolloutServiceService>, PreviousReleaseMethods> {
  return {
    async decideOffer(request) {
      const device = request.device;
      if (!device) throw invalidArgument('device is required');
      const hardware = profileOfMessage(device);
      const decision = await rollout.devices.decideOffer(request.projectId, {
        id: device.id,
        channelId: device.channelId,
        groupIds: device.groupIds,
        framework: hardware.framework,
        chipFamily: hardware.chipFamily,
        boardId: device.boardIdReported ? hardware.boardId : undefined,
        hardwareRevision: device.hardwareRevisionReported ? hardware.hardwareRevision : undefined,
        // The release before sends a dimension the device left out as blank.
        partitionProfile: hardware.partitionProfile || undefined,
        nvsSchemaVersion: hardware.nvsSchemaVersion ?? undefined,
        securityMode: hardware.securityMode || undefined,
        currentBuildNumber: device.currentBuildNumber,
      });
      if (decision.status !== 'offered') return { status: decision.status, message: decision.message, offer: undefined };
      return { status: decision.status, message: decision.message, offer: offerOf(decision.deployment.id, decision.artifact) };
    },
  };
}
