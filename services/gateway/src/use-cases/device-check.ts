import type { CheckStatus } from '@ota/vocabulary';
import type { RequestTrace } from '@ota/logging';
import { randomUUID } from 'node:crypto';
import { profileMessage, profileOf } from '@ota/manifest';
import { registry, type rollout } from '@ota/proto';
import type { RegistryPort, RolloutPort } from './ports';

/**
 * What the device said in its check (docs/api.md, "The check"), as the route validated it. A
 * field the device left out is absent; its names are the API's.
 */
export interface CheckRequest {
  framework: string;
  chip_family: string;
  current_build_number: number;
  board_id?: string;
  hardware_revision?: string;
  partition_profile?: string;
  nvs_schema_version?: number;
  security_mode?: string;
  version_label?: string;
  current_hash?: string;
}

/** What a device check needs from the services around the gateway; tests pass fakes. */
export interface DeviceCheckPorts {
  registry: RegistryPort<'checkInDevice' | 'recordCheck'>;
  rollout: RolloutPort<'decideOffer'>;
  /** The owner's plan cap on devices (from the plan cache). */
  maxDevicesOf(ownerId: string): Promise<number>;
  /** Where a check that could not be recorded is reported (recording is best effort). */
  recordFailed(error: unknown, deviceId: string): void;
}

export interface DeviceCheck {
  projectId: string;
  ownerId: string;
  /** The device_id the check speaks for (from the body with a project token, from the token otherwise). */
  deviceId: string;
  /** Only the shared project token registers unknown devices and may not speak for a device with its own token. */
  viaProjectToken: boolean;
  body: CheckRequest;
  trace: RequestTrace;
}

/** The answer's substance: an offer, or a routine outcome with its message. */
export type DeviceCheckOutcome = { status: 'offered'; offer: rollout.Offer } | { status: string; message: string; offer?: undefined };

export const CHECK_MESSAGES = {
  over_limit: "the owner's plan device cap is reached; the device was not registered",
  device_inactive: 'the device is deactivated',
  token_required: 'this device has its own token: check with it, not with the project token',
} as const satisfies Partial<Record<CheckStatus, string>>;

/**
 * A device check (docs/api.md, "The check decision"): registry reads or registers the device, rollout
 * decides, and registry writes the check down (heartbeat, outcome and decision record in one
 * device write) before the answer, so that a read right after it sees all of it.
 */
export async function checkDevice(ports: DeviceCheckPorts, check: DeviceCheck): Promise<DeviceCheckOutcome> {
  const { body, projectId, trace } = check;
  const reported = {
    framework: body.framework,
    chipFamily: body.chip_family,
    boardId: body.board_id,
    hardwareRevision: body.hardware_revision,
    partitionProfile: body.partition_profile,
    nvsSchemaVersion: body.nvs_schema_version,
    securityMode: body.security_mode,
    versionLabel: body.version_label,
    currentHash: body.current_hash,
  };
  const maxDevices = check.viaProjectToken ? await ports.maxDevicesOf(check.ownerId) : 0;
  const checkIn = await ports.registry.checkInDevice(
    { projectId, ownerId: check.ownerId, deviceId: check.deviceId, viaProjectToken: check.viaProjectToken, maxDevices, reported },
    trace,
  );
  // A device that was not registered has nothing to record on.
  if (checkIn.outcome === registry.CheckInOutcome.CHECK_IN_OUTCOME_OVER_LIMIT || !checkIn.device) {
    return { status: 'over_limit', message: CHECK_MESSAGES.over_limit };
  }
  const device = checkIn.device;

  /** Recording is best effort (docs/api.md, "Records"): a failure is reported, and the answer stands. */
  const record = async (status: string, message: string, heartbeat: boolean, offer?: rollout.Offer) => {
    await ports.registry
      .recordCheck(
        {
          projectId,
          id: device.id,
          checkCount: device.checkCount,
          heartbeat,
          reported,
          event: {
            id: randomUUID(),
            projectId,
            deviceId: check.deviceId,
            createdAt: new Date(),
            decision: offer ? 'offered' : 'no_update',
            status,
            deploymentId: offer?.deploymentId ?? '',
            artifactBuildNumber: offer?.buildNumber,
            reportedBuildNumber: body.current_build_number,
            reportedVersion: body.version_label ?? '',
            message,
          },
        },
        trace,
      )
      .catch((error: unknown) => ports.recordFailed(error, check.deviceId));
  };

  // An inactive device, and one that must use its own token, get no heartbeat (docs/api.md, "The check decision").
  if (checkIn.outcome === registry.CheckInOutcome.CHECK_IN_OUTCOME_INACTIVE) {
    await record('device_inactive', CHECK_MESSAGES.device_inactive, false);
    return { status: 'device_inactive', message: CHECK_MESSAGES.device_inactive };
  }
  if (checkIn.outcome === registry.CheckInOutcome.CHECK_IN_OUTCOME_TOKEN_REQUIRED) {
    await record('token_required', CHECK_MESSAGES.token_required, false);
    return { status: 'token_required', message: CHECK_MESSAGES.token_required };
  }
  const hardware = profileMessage(profileOf(body));
  const decision = await ports.rollout.decideOffer(
    {
      projectId,
      device: {
        id: device.id,
        channelId: device.channelId,
        groupIds: device.groupIds,
        hardware,
        ...hardware,
        boardIdReported: body.board_id !== undefined,
        hardwareRevisionReported: body.hardware_revision !== undefined,
        currentBuildNumber: body.current_build_number,
      },
    },
    trace,
  );
  await record(decision.status, decision.message, true, decision.offer);
  return decision.offer ? { status: 'offered', offer: decision.offer } : { status: decision.status, message: decision.message };
}
