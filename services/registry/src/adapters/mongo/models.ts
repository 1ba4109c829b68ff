import type { HardwareProfileFields } from '@ota/manifest';
import type { PlaceDoc } from '@ota/mongo';
import { Schema, type Connection } from 'mongoose';
import type { StoredCheckEntry } from './check-history';

// Documents keep snake_case field names: they are what an operator sees in the database and what
// the API returns, so the two read the same.

export interface ProjectDoc {
  _id: string;
  name: string;
  slug: string;
  owner_id: string;
  created_at: Date;
}

export interface ChannelDoc {
  _id: string;
  project_id: string;
  name: string;
  is_default: boolean;
  created_at: Date;
}

export interface GroupDoc {
  _id: string;
  project_id: string;
  name: string;
  created_at: Date;
}

export interface DeviceDoc extends HardwareProfileFields {
  _id: string;
  project_id: string;
  device_id: string;
  current_build_number: number;
  current_version_label: string;
  current_hash: string;
  last_ota_status: string;
  last_ota_reason: string;
  /** The deployment of the last status report and its status's rank: the status moves only up within it. */
  last_ota_deployment_id?: string;
  last_ota_rank?: number;
  active: boolean;
  last_seen: Date | null;
  last_check_at: Date | null;
  last_check_status: string;
  channel_id: string;
  metadata: Record<string, unknown>;
  created_at: Date;
  /** A copy of the memberships, kept on the device so that a check reads it by primary key. */
  group_ids: string[];
  /** The owner's device place this device holds (see device_places). */
  place: number;
  token_required: boolean;
  /** Checks recorded so far; each decision record takes the slot check_count mod 20. */
  check_count: number;
  /**
   * The newest 20 OTA decisions, in slots `s0` to `s19`, each one string (see CheckHistoryEntry
   * and check-history.ts). Device reads leave it out (DEVICE_FIELDS); only the check-events
   * listing reads it.
   */
  check_history?: Record<string, StoredCheckEntry>;
}

/** Every device field but the decision history: the projection of every device read. */
export const DEVICE_FIELDS = { check_history: 0 } as const;

/**
 * One OTA decision of a device (docs/api.md, "Records"), in one of its 20 history slots on the device document,
 * `check_history.s<n mod 20>` for the device's n-th check. The check's one device write sets its
 * slot whole beside the heartbeat and the outcome, so the history costs no write of its own,
 * holds the newest 20 with nothing to trim, and is never read back first. The slot holds the
 * entry encoded as one string (encodeCheckEntry).
 */
export interface CheckHistoryEntry {
  /** The device's check_count for this record: newest first is seq descending. */
  seq: number;
  id: string;
  created_at: Date;
  decision: string;
  status: string;
  deployment_id: string;
  artifact_build_number: number | null;
  reported_build_number: number | null;
  reported_version: string;
  message: string;
}

/** One membership of a device in a group; `_id` is `${group_id}:${device_id}`. */
export interface MembershipDoc {
  _id: string;
  project_id: string;
  group_id: string;
  device_id: string;
}

const options = { versionKey: false as const, strict: 'throw' as const };

export function registerModels(connection: Connection) {
  const projectSchema = new Schema<ProjectDoc>(
    {
      _id: String,
      name: { type: String, required: true },
      slug: { type: String, required: true },
      owner_id: { type: String, required: true },
      created_at: { type: Date, required: true },
    },
    options,
  );
  projectSchema.index({ owner_id: 1, slug: 1 }, { unique: true });

  const channelSchema = new Schema<ChannelDoc>(
    {
      _id: String,
      project_id: { type: String, required: true },
      name: { type: String, required: true },
      is_default: { type: Boolean, required: true },
      created_at: { type: Date, required: true },
    },
    options,
  );
  channelSchema.index({ project_id: 1, name: 1 }, { unique: true });

  const groupSchema = new Schema<GroupDoc>(
    {
      _id: String,
      project_id: { type: String, required: true },
      name: { type: String, required: true },
      created_at: { type: Date, required: true },
    },
    options,
  );
  groupSchema.index({ project_id: 1, name: 1 }, { unique: true });

  const deviceSchema = new Schema<DeviceDoc>(
    {
      _id: String,
      project_id: { type: String, required: true },
      device_id: { type: String, required: true },
      framework: String,
      chip_family: String,
      board_id: String,
      hardware_revision: String,
      partition_profile: String,
      nvs_schema_version: { type: Number, default: null },
      security_mode: String,
      current_build_number: Number,
      current_version_label: String,
      current_hash: String,
      last_ota_status: String,
      last_ota_reason: String,
      last_ota_deployment_id: String,
      last_ota_rank: Number,
      active: Boolean,
      last_seen: { type: Date, default: null },
      last_check_at: { type: Date, default: null },
      last_check_status: String,
      channel_id: String,
      metadata: { type: Schema.Types.Mixed, default: {} },
      created_at: Date,
      group_ids: [String],
      place: Number,
      token_required: Boolean,
      check_count: { type: Number, default: 0 },
      check_history: Schema.Types.Mixed,
    },
    { ...options, minimize: false },
  );
  deviceSchema.index({ project_id: 1, device_id: 1 }, { unique: true });
  deviceSchema.index({ project_id: 1, channel_id: 1 });

  const membershipSchema = new Schema<MembershipDoc>({ _id: String, project_id: String, group_id: String, device_id: String }, options);
  membershipSchema.index({ device_id: 1 });
  membershipSchema.index({ group_id: 1 });
  membershipSchema.index({ project_id: 1 });

  // Per owner: one place per device, across all projects; the device cap is a limit on places.
  const devicePlaceSchema = new Schema<PlaceDoc>({ _id: String, scope: String, place: Number }, options);
  devicePlaceSchema.index({ scope: 1 });

  return {
    Project: connection.model<ProjectDoc>('Project', projectSchema, 'projects'),
    Channel: connection.model<ChannelDoc>('Channel', channelSchema, 'channels'),
    Group: connection.model<GroupDoc>('Group', groupSchema, 'groups'),
    Device: connection.model<DeviceDoc>('Device', deviceSchema, 'devices'),
    Membership: connection.model<MembershipDoc>('Membership', membershipSchema, 'memberships'),
    DevicePlace: connection.model<PlaceDoc>('DevicePlace', devicePlaceSchema, 'device_places'),
  };
}

export type RegistryModels = ReturnType<typeof registerModels>;
