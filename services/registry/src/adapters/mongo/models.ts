import { Schema, type Connection } from 'mongoose';

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

export interface DeviceDoc {
  _id: string;
  project_id: string;
  device_id: string;
  framework: string;
  chip_family: string;
  board_id: string;
  hardware_revision: string;
  partition_profile: string;
  nvs_schema_version: number | null;
  security_mode: string;
  current_build_number: number;
  current_version_label: string;
  current_hash: string;
  last_ota_status: string;
  last_ota_reason: string;
  active: boolean;
  last_seen: Date | null;
  last_check_at: Date | null;
  last_check_status: string;
  channel_id: string;
  group_ids: string[];
  metadata: Record<string, unknown>;
  created_at: Date;
}

/** How many devices an owner has across all projects: the counter the device cap is enforced on. */
export interface OwnerDeviceCountDoc {
  _id: string;
  count: number;
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
      active: Boolean,
      last_seen: { type: Date, default: null },
      last_check_at: { type: Date, default: null },
      last_check_status: String,
      channel_id: String,
      group_ids: [String],
      metadata: { type: Schema.Types.Mixed, default: {} },
      created_at: Date,
    },
    { ...options, minimize: false },
  );
  deviceSchema.index({ project_id: 1, device_id: 1 }, { unique: true });
  deviceSchema.index({ project_id: 1, channel_id: 1 });
  deviceSchema.index({ project_id: 1, group_ids: 1 });

  const ownerDeviceCountSchema = new Schema<OwnerDeviceCountDoc>({ _id: String, count: Number }, options);

  return {
    Project: connection.model<ProjectDoc>('Project', projectSchema, 'projects'),
    Channel: connection.model<ChannelDoc>('Channel', channelSchema, 'channels'),
    Group: connection.model<GroupDoc>('Group', groupSchema, 'groups'),
    Device: connection.model<DeviceDoc>('Device', deviceSchema, 'devices'),
    OwnerDeviceCount: connection.model<OwnerDeviceCountDoc>('OwnerDeviceCount', ownerDeviceCountSchema, 'owner_device_counts'),
  };
}

export type RegistryModels = ReturnType<typeof registerModels>;
