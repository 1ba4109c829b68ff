import type { Deferral } from '@ota/decision';
import type { HealthSnapshot } from './device-health';
// The registry's records, as the domain sees them (no storage or wire types).

import type { HardwareProfile, ReportedHardware } from '@ota/manifest';

export interface Project {
  id: string;
  name: string;
  slug: string;
  ownerId: string;
  createdAt: Date;
  /** Uploads must be ESP-IDF application images (docs/api.md, "The image"). */
  requireEspImage: boolean;
}

/** What a project's settings change sets; an absent one stays as it is. */
export interface ProjectSettings {
  requireEspImage?: boolean;
}

export interface Channel {
  id: string;
  projectId: string;
  name: string;
  isDefault: boolean;
  createdAt: Date;
}

export const DEFAULT_CHANNEL_NAME = 'stable';

export interface Group {
  id: string;
  projectId: string;
  name: string;
  createdAt: Date;
}

export interface DeviceFilter {
  active?: boolean;
  groupId?: string;
  channelId?: string;
  /** Case-insensitive text within the device_id. */
  search?: string;
  chipFamily?: string;
  /** Only the device with exactly this device_id. */
  deviceId?: string;
  /** Only these device UUIDs. */
  ids?: string[];
}

/** A page of a device listing, in the order of the devices' UUIDs: at most `limit` devices after the UUID `afterId`. */
export interface DevicePage {
  limit: number;
  afterId?: string;
}

/** A page of devices, the count of every match of the filters, and where the next page starts. */
export interface DevicePageRead {
  devices: Device[];
  /** Exact when the page read every match; otherwise extrapolated from the share of the fleet it read. */
  total: { count: number; estimated: boolean };
  /** The `afterId` of the next page; absent on the last. */
  nextAfterId?: string;
}

/**
 * A number of devices: exact, or, in a large project, extrapolated from a sample of it
 * (adapters/mongo/device-buckets.ts, sampleDevices).
 */
export interface DeviceCount {
  count: number;
  estimated: boolean;
}

/** Devices per name, for the groups' and channels' listings. */
export type CountsById = Map<string, number>;

/** Devices per id, and the ids whose counts are estimates (a large project). */
export interface CountsPerId {
  counts: CountsById;
  estimated: ReadonlySet<string>;
}

/** The hardware a device says it is (docs/api.md, "Device"): what a build's manifest is matched against. */
export type { HardwareProfile };

/** What pre-provisioning may set; everything else starts empty. */
export interface NewDeviceFields extends HardwareProfile {
  deviceId: string;
  channelId: string;
  active: boolean;
  metadata: Record<string, unknown>;
  tokenRequired: boolean;
}

export interface DeviceChange {
  active?: boolean;
  metadata?: Record<string, unknown>;
  channelId?: string;
  tokenRequired?: boolean;
}

/** What a device says about itself on a check. Optional fields were absent from the request. */
export interface ReportedProfile extends ReportedHardware {
  versionLabel?: string | undefined;
  currentHash?: string | undefined;
}

export interface Device extends HardwareProfile {
  id: string;
  projectId: string;
  deviceId: string;
  currentBuildNumber: number;
  currentVersionLabel: string;
  currentHash: string;
  lastOtaStatus: string;
  lastOtaReason: string;
  active: boolean;
  lastSeen: Date | null;
  lastCheckAt: Date | null;
  lastCheckStatus: string;
  channelId: string;
  groupIds: string[];
  metadata: Record<string, unknown>;
  createdAt: Date;
  /** The device has its own token; the shared project token may not speak for it. */
  tokenRequired: boolean;
  /** Checks recorded so far (the decision history's sequence). */
  checkCount: number;
  /** The health its last check reported, when it reports health (device-health.ts). */
  health?: HealthSnapshot | null;
  /** The offer the device last put off, and until when (the deferred event). */
  deferral?: Deferral | null;
}

/**
 * What a check decides on of a device: the fleet as a deployment preview reads it (the device's
 * profile, docs/architecture.md "Device profiles").
 */
export interface FleetDevice extends HardwareProfile {
  id: string;
  deviceId: string;
  active: boolean;
  channelId: string;
  /** Of the groups asked for (FleetGroups), those the device is a member of. */
  groupIds: string[];
  currentBuildNumber: number;
}

/** The groups whose memberships a fleet read gives each device: those some deployment targets, or all of them. */
export type FleetGroups = readonly string[] | 'all';

/** docs/api.md, "Records": the newest 20 decision records per device are kept, with no time expiry. */
export const DECISION_RECORDS_KEPT_PER_DEVICE = 20;

/** One OTA decision (docs/api.md, "Records"). */
export interface DecisionRecord {
  id: string;
  projectId: string;
  /** The unit's own device_id string. */
  deviceId: string;
  createdAt: Date;
  decision: string;
  status: string;
  deploymentId: string;
  artifactBuildNumber: number | null;
  reportedBuildNumber: number | null;
  reportedVersion: string;
  message: string;
}

/**
 * What a status report writes on the device, in one conditional update (docs/architecture.md, "A
 * status report, hop by hop"): the status moves only up within its deployment (`rank`, the
 * vocabulary's), a report on another deployment replaces it, and with `viaProjectToken` a device
 * with its own token is not written.
 */
export interface StatusReportWrite {
  projectId: string;
  /** The unit's own device_id string; the device's UUID is derived from it. */
  deviceId: string;
  viaProjectToken: boolean;
  deploymentId: string;
  rank: number;
  change: { lastOtaStatus: string; lastOtaReason: string; currentBuildNumber?: number };
}

/**
 * A check's first write, made before the decision (docs/architecture.md, "A device check, hop by
 * hop"): last_check_at and the next check_count, and the heartbeat (last_seen and the reported
 * fields) when the device may have one.
 */
export interface CheckIn extends Pick<CheckInInput, 'projectId' | 'deviceId' | 'reported' | 'viaProjectToken'> {
  at: Date;
  /** Kept on the device with the heartbeat, when the check reported it. */
  health?: HealthSnapshot | undefined;
}

/** What a check writes down after its decision: the decision record, and the outcome when it changed. */
export interface DecisionRecordWrite {
  projectId: string;
  /** The device's UUID. */
  id: string;
  /** This check's number: the device's check_count after its check-in. Records list newest first by it. */
  seq: number;
  /** The outcome of the device's check before this one; last_check_status is written only when this one differs. */
  previousStatus: string;
  record: DecisionRecord;
}

/** PREVIOUS RELEASE: a whole check written after the decision, as the release before's gateways send it (RecordCheck). */
export interface WholeCheckWrite {
  projectId: string;
  /** The device's UUID. */
  id: string;
  /** The device's checkCount as CheckInDevice read it. */
  checkCount: number;
  /** The heartbeat and reported fields; absent for an inactive device (docs/api.md, "The check decision"). */
  reported?: ReportedProfile;
  record: DecisionRecord;
}

export interface DecisionRecordQuery {
  projectId: string;
  /** The device's UUID. */
  id: string;
  limit: number;
  since?: Date;
  decision?: string;
  status?: string;
}

/** Who checks in, as the device API said it. */
export interface CheckInInput {
  projectId: string;
  ownerId: string;
  /** The unit's own device_id string. */
  deviceId: string;
  reported: ReportedProfile;
  /**
   * Only the shared project token registers unknown devices, and it may not speak for a device
   * with its own token: such a device, like an inactive one, gets no heartbeat (docs/api.md, "The
   * check decision").
   */
  viaProjectToken: boolean;
  /** The owner's device cap (0: none). */
  maxDevices: number;
}

export type CheckInResult =
  | { outcome: 'known' | 'registered' | 'inactive' | 'token_required'; device: Device }
  | { outcome: 'over_limit' };
