// The registry's records, as the domain sees them (no storage or wire types).

export interface Project {
  id: string;
  name: string;
  slug: string;
  ownerId: string;
  createdAt: Date;
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
}

/** What pre-provisioning may set; everything else starts empty. */
export interface NewDeviceFields {
  deviceId: string;
  framework: string;
  chipFamily: string;
  boardId: string;
  hardwareRevision: string;
  partitionProfile: string;
  nvsSchemaVersion: number | null;
  securityMode: string;
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
export interface ReportedProfile {
  framework: string;
  chipFamily: string;
  boardId?: string;
  hardwareRevision?: string;
  partitionProfile?: string;
  nvsSchemaVersion?: number;
  securityMode?: string;
  versionLabel?: string;
  currentHash?: string;
}

export interface Device {
  id: string;
  projectId: string;
  deviceId: string;
  framework: string;
  chipFamily: string;
  boardId: string;
  hardwareRevision: string;
  partitionProfile: string;
  nvsSchemaVersion: number | null;
  securityMode: string;
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
}

export type CheckInResult =
  | { outcome: 'known' | 'registered' | 'inactive' | 'token_required'; device: Device }
  | { outcome: 'over_limit' };
