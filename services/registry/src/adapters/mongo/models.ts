import type { HardwareProfileFields } from '@ota/manifest';
import type { PlaceDoc } from '@ota/mongo';
import { Schema, type Connection } from 'mongoose';

// Documents keep snake_case field names: they are what an operator sees in the database and what
// the API returns, so the two read the same.

export interface ProjectDoc {
  _id: string;
  name: string;
  slug: string;
  owner_id: string;
  created_at: Date;
  /** Absent on a project made before the setting: false. */
  require_esp_image?: boolean;
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
  /**
   * PREVIOUS RELEASE (the next release unsets it). The copy of the device's memberships that the
   * releases before kept on it; neither read nor written since, the memberships being the one record.
   */
  group_ids?: string[];
  /** The owner's device place this device holds (see device_places). */
  place: number;
  /** The page buckets the device is in (devicePageKeys in @ota/ids; device-buckets.ts reads them). */
  page_keys: string[];
  token_required: boolean;
  /** Checks of the device so far; the n-th check's decision record has seq n (DecisionRecordDoc). */
  check_count: number;
  /** The health the device's last check reported (device-health.ts). */
  health?: HealthDoc;
  /** The offer the device last put off (the deferred event). */
  deferral?: { deployment_id: string; until: Date } | null;
  /**
   * PREVIOUS RELEASE (the release after this one removes them; docs/operations.md says why they
   * stay until then). Where the releases before this one kept the newest 20 decisions: slots `s0` to `s19`, each the
   * record of the check n with n mod 20 = slot (decision-record-entry.ts). No longer written; the
   * check-events listing still reads them, so the history of a device that has not checked 20
   * times since the upgrade is whole, and a rollback finds them where it wrote them.
   */
  check_history?: Record<string, StoredDecisionRecordEntry>;
}

/** A device's profile (device-profiles.ts): what a check decides on, derived from its device document. */
export interface DeviceProfileDoc {
  /** The device's UUID. */
  _id: string;
  /** The device's page bucket at PROFILE_BUCKET_LEVEL (devicePageKey in @ota/ids). */
  k: string;
  /**
   * The device's page bucket at PROFILE_COUNT_BUCKET_LEVEL. Absent only from a profile that a replica
   * of the release before inserted during an upgrade (it writes `k` and `p`).
   */
  k3?: string;
  /** The profile as one JSON array (profileDocOf). */
  p: string;
}

/** One version of the pack of a finer profile bucket (profile-packs.ts): a cache of its profiles. */
export interface ProfilePackDoc {
  /** `<k3>@<v>`: one writer alone can insert a version. */
  _id: string;
  /** The profiles' bucket, `k`: a preview reads a bucket's packs by it. */
  k: string;
  /** The profiles' finer bucket, `k3`. */
  k3: string;
  /** The version: a reader takes the highest of a finer bucket. 0 waits to be filled. */
  v: number;
  /** The profiles, as JSON of each device's UUID to its profile's array; null in version 0. */
  ps: string | null;
}

/** A write or deletion of a device's profile (profile-packs.ts), inserted after it: a pack may not hold it yet. */
export interface ProfileChangeDoc {
  /** Its own, new for each change. */
  _id: string;
  /** The profile's bucket. */
  k: string;
  /** The device's UUID. */
  i: string;
}

export interface HealthDoc {
  build: number;
  reset_reason: string;
  boots: number;
  abnormal_boots: number;
  uptime_seconds: number;
  min_free_heap?: number;
  at: Date;
}

/** Every device field but the former decision history: the projection of every device read. */
export const DEVICE_FIELDS = { check_history: 0 } as const;

/**
 * One OTA decision of a device (docs/api.md, "Records"), a document of its own in
 * `check_records`: a check inserts it, and never reads it back. The record's fields are one
 * string, `entry` (encodeDecisionRecordEntry), because FerretDB v1 stores and reads the type of every
 * field beside the document. A device keeps at most 39: every 20th check deletes those
 * beyond the newest 20 (Registry.recordCheck), and the listing shows the newest 20.
 */
export interface DecisionRecordDoc {
  /** The record's id. */
  _id: string;
  /** The device's UUID. */
  device_id: string;
  seq: number;
  entry: string;
}

/** One OTA decision of a device, as a record's `entry` and a former history slot hold it (encodeDecisionRecordEntry). */
/**
 * A decision record as the store holds it: one JSON array in a string (a `check_records`
 * document's `entry`, and the device's history slots of the release before), or the entry as an
 * object (the slots of the releases before that).
 *
 * Why a string: FerretDB v1 keeps the type of every field beside the document and reads and
 * rewrites it whole; ten fields as one string cost it a fraction of ten fields
 * (docs/performance.md, change 12).
 */
export type StoredDecisionRecordEntry = string | DecisionRecordEntry;

export interface DecisionRecordEntry {
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
  /**
   * The device's page buckets within its group (devicePageKeys of the group): a bulk change reads a
   * group's members one bucket at a time by one of them. Absent on memberships stored before
   * (data-migrations.ts, addMembershipGroupKeys).
   */
  group_keys: string[];
  /** The device's page buckets in its project: read by the release before only (kept for a rollback to it). */
  page_keys: string[];
}

/**
 * One scope's devices per build at the start of a period (fleet-builds.ts); `_id` is
 * `${project}:${scope}:${scope id}:${period}`. The period's claim is `${project}:claim:${period}`,
 * with no builds.
 */
export interface FleetSnapshotDoc {
  _id: string;
  project_id: string;
  scope: 'project' | 'channel' | 'group' | 'claim';
  scope_id: string;
  at: Date;
  builds: Array<{ build_number: number; devices: number }>;
}

/** A bulk membership change (membership-changes.ts), its progress, and the replica that runs it. */
export interface MembershipChangeDoc {
  _id: string;
  project_id: string;
  group_id: string;
  action: 'add' | 'remove';
  matching: { active?: boolean; group_id?: string; channel_id?: string; chip_family?: string; search?: string };
  /** role and via are absent from changes started before roles. */
  actor: { type: string; id: string; token_prefix: string; role?: string; via?: string };
  state: 'running' | 'done' | 'failed';
  level: number;
  buckets_done: number;
  devices_matched: number;
  added: number;
  removed: number;
  devices_expected: number;
  created_at: Date;
  finished_at: Date | null;
  detail: string;
  audited: boolean;
  /** The replica running the change, and until when; past that, another replica takes it over. */
  runner: string;
  lease_until: Date;
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
      require_esp_image: Boolean,
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
      chip_revision: { type: Number, default: null },
      secure_version: { type: Number, default: null },
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
      place: Number,
      page_keys: [String],
      token_required: Boolean,
      check_count: { type: Number, default: 0 },
      check_history: Schema.Types.Mixed,
      health: Schema.Types.Mixed,
      deferral: Schema.Types.Mixed,
    },
    { ...options, minimize: false },
  );
  deviceSchema.index({ project_id: 1, device_id: 1 }, { unique: true });
  deviceSchema.index({ project_id: 1, channel_id: 1 });
  // Every page of a device list reads one bucket at a time by this key (device-buckets.ts).
  deviceSchema.index({ page_keys: 1 });

  const deviceProfileSchema = new Schema<DeviceProfileDoc>({ _id: String, k: { type: String, required: true }, k3: String, p: { type: String, required: true } }, options);
  // A preview reads the profiles one bucket at a time, a count a few finer buckets (device-profiles.ts).
  deviceProfileSchema.index({ k: 1 });
  deviceProfileSchema.index({ k3: 1 });

  const profilePackSchema = new Schema<ProfilePackDoc>({ _id: String, k: { type: String, required: true }, k3: { type: String, required: true }, v: { type: Number, required: true }, ps: { type: String, default: null } }, options);
  // A preview reads a bucket's packs together; a new version's maker reads its finer bucket's versions.
  profilePackSchema.index({ k: 1 });
  profilePackSchema.index({ k3: 1 });
  const profileChangeSchema = new Schema<ProfileChangeDoc>({ _id: String, k: { type: String, required: true }, i: { type: String, required: true } }, options);
  profileChangeSchema.index({ k: 1 });

  const decisionRecordSchema = new Schema<DecisionRecordDoc>({ _id: String, device_id: { type: String, required: true }, seq: { type: Number, required: true }, entry: { type: String, required: true } }, options);
  // The device's records are at most 39: the listing and the trim read them all by device, so the
  // index holds the device alone (on FerretDB every indexed field is one more index to update).
  decisionRecordSchema.index({ device_id: 1 });

  const membershipSchema = new Schema<MembershipDoc>({ _id: String, project_id: String, group_id: String, device_id: String, group_keys: [String], page_keys: [String] }, options);
  membershipSchema.index({ device_id: 1 });
  membershipSchema.index({ group_id: 1 });
  // One key names a group and a bucket, so that PostgreSQL reads a bucket's members from one index
  // under FerretDB; with the group and the project's bucket as two fields it read all the group's
  // members and filtered them (docs/performance.md, "A group's members in a bucket by one key").
  membershipSchema.index({ group_keys: 1 });
  // A page of devices reads its devices' memberships by the project's buckets they fall in.
  membershipSchema.index({ page_keys: 1 });

  const membershipChangeSchema = new Schema<MembershipChangeDoc>(
    {
      _id: String,
      project_id: String,
      group_id: String,
      action: String,
      matching: Schema.Types.Mixed,
      actor: Schema.Types.Mixed,
      state: String,
      level: Number,
      buckets_done: Number,
      devices_matched: Number,
      added: Number,
      removed: Number,
      devices_expected: Number,
      created_at: Date,
      finished_at: { type: Date, default: null },
      detail: String,
      audited: Boolean,
      runner: String,
      lease_until: Date,
    },
    { ...options, minimize: false },
  );
  // The sweep looks for changes that no replica is running, or whose audit event is not out yet.
  membershipChangeSchema.index({ state: 1 });
  membershipChangeSchema.index({ audited: 1 });
  membershipSchema.index({ project_id: 1 });

  // Per owner: one place per device, across all projects; the device cap is a limit on places.
  const devicePlaceSchema = new Schema<PlaceDoc>({ _id: String, scope: String, place: Number }, options);
  devicePlaceSchema.index({ scope: 1 });

  const fleetSnapshotSchema = new Schema<FleetSnapshotDoc>({ _id: String, project_id: String, scope: String, scope_id: String, at: Date, builds: Schema.Types.Mixed }, options);
  fleetSnapshotSchema.index({ project_id: 1, scope: 1, scope_id: 1, at: 1 });

  return {
    Project: connection.model<ProjectDoc>('Project', projectSchema, 'projects'),
    Channel: connection.model<ChannelDoc>('Channel', channelSchema, 'channels'),
    Group: connection.model<GroupDoc>('Group', groupSchema, 'groups'),
    Device: connection.model<DeviceDoc>('Device', deviceSchema, 'devices'),
    DeviceProfile: connection.model<DeviceProfileDoc>('DeviceProfile', deviceProfileSchema, 'device_profiles'),
    ProfilePack: connection.model<ProfilePackDoc>('ProfilePack', profilePackSchema, 'device_profile_packs'),
    ProfileChange: connection.model<ProfileChangeDoc>('ProfileChange', profileChangeSchema, 'device_profile_changes'),
    // The projects that have profile packs, by id (profile-packs.ts): the others' previews and profile writes do without them.
    PackedProject: connection.model<{ _id: string }>('PackedProject', new Schema<{ _id: string }>({ _id: String }, options), 'device_profile_packed_projects'),
    Membership: connection.model<MembershipDoc>('Membership', membershipSchema, 'memberships'),
    DecisionRecord: connection.model<DecisionRecordDoc>('DecisionRecord', decisionRecordSchema, 'check_records'),
    DevicePlace: connection.model<PlaceDoc>('DevicePlace', devicePlaceSchema, 'device_places'),
    MembershipChange: connection.model<MembershipChangeDoc>('MembershipChange', membershipChangeSchema, 'membership_changes'),
    FleetSnapshot: connection.model<FleetSnapshotDoc>('FleetSnapshot', fleetSnapshotSchema, 'fleet_snapshots'),
    // The data migrations that read every document, and so are run once (data-migrations.ts).
    DataMigration: connection.model<{ _id: string; at: Date }>('DataMigration', new Schema<{ _id: string; at: Date }>({ _id: String, at: Date }, options), 'data_migrations'),
  };
}

export type RegistryModels = ReturnType<typeof registerModels>;
