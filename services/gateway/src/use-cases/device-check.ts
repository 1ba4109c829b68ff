import { invalidArgument } from '@ota/errors';
import type { OutboundCall } from '@ota/logging';
import type { registry, rollout } from '@ota/proto';
import type { RegistryPort } from './ports';

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
  chip_revision?: number;
  secure_version?: number;
  version_label?: string;
  current_hash?: string;
  delta_formats?: string[];
  utc_offset_minutes?: number;
  health?: { reset_reason: string; boots: number; abnormal_boots: number; uptime_seconds: number; min_free_heap?: number };
}

/** What a device check needs from the services around the gateway; tests pass fakes. */
export interface DeviceCheckPorts {
  registry: RegistryPort<'checkDevice'>;
  /** The owner's plan cap on devices (from the plan cache). */
  maxDevicesOf(ownerId: string): Promise<number>;
}

export interface DeviceCheck {
  projectId: string;
  ownerId: string;
  /** The device_id the check speaks for (from the body with a project token, from the token otherwise). */
  deviceId: string;
  /** Only the shared project token registers unknown devices and may not speak for a device with its own token. */
  viaProjectToken: boolean;
  body: CheckRequest;
  call: OutboundCall;
}

/** The answer's substance: an offer, or a routine outcome with its message. */
export type DeviceCheckOutcome = { status: 'offered'; offer: rollout.Offer } | { status: string; message: string; offer?: undefined; windowOpensAt?: Date; deferredUntil?: Date; checkAgainAt?: Date };

/**
 * A device check (docs/api.md, "The check decision") is one call: registry reads or registers the
 * device, decides, and writes the check down before it answers (docs/architecture.md, "A device
 * check, hop by hop"). The gateway brings the owner's device cap, which only a project token needs.
 */
export async function checkDevice(ports: DeviceCheckPorts, check: DeviceCheck): Promise<DeviceCheckOutcome> {
  const { health } = check.body;
  if (health && health.abnormal_boots > health.boots) throw invalidArgument('health.abnormal_boots must be at most health.boots');
  const maxDevices = check.viaProjectToken ? await ports.maxDevicesOf(check.ownerId) : 0;
  const answer = await ports.registry.checkDevice(
    {
      projectId: check.projectId,
      ownerId: check.ownerId,
      deviceId: check.deviceId,
      viaProjectToken: check.viaProjectToken,
      maxDevices,
      reported: reportedProfileOf(check.body),
      currentBuildNumber: check.body.current_build_number,
      utcOffsetMinutes: check.body.utc_offset_minutes,
      health: health && {
        resetReason: health.reset_reason,
        boots: health.boots,
        abnormalBoots: health.abnormal_boots,
        uptimeSeconds: health.uptime_seconds,
        minFreeHeap: health.min_free_heap,
      },
    },
    check.call,
  );
  return answer.offer
    ? { status: 'offered', offer: answer.offer }
    : { status: answer.status, message: answer.message, windowOpensAt: answer.windowOpensAt, deferredUntil: answer.deferredUntil, checkAgainAt: answer.checkAgainAt };
}

/**
 * The device's words, as the check carries them to the decision: each field it left out stays
 * unset, the one spelling of "not reported" from here to `@ota/decision`.
 */
function reportedProfileOf(body: CheckRequest): registry.ReportedProfile {
  return {
    framework: body.framework,
    chipFamily: body.chip_family,
    boardId: body.board_id,
    hardwareRevision: body.hardware_revision,
    partitionProfile: body.partition_profile,
    nvsSchemaVersion: body.nvs_schema_version,
    securityMode: body.security_mode,
    versionLabel: body.version_label,
    currentHash: body.current_hash,
    chipRevision: body.chip_revision,
    secureVersion: body.secure_version,
  };
}
