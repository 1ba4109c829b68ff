// Event payloads, as JSON on the wire. Timestamps are ISO 8601 strings.

import type { BuildRequirementFields } from '@ota/manifest';

/** What read models need to know of an artifact; artifacts change only their `archived` flag. */
export interface ArtifactChangedEvent extends BuildRequirementFields {
  id: string;
  project_id: string;
  build_number: number;
  version_label: string;
  checksum_sha256: string;
  file_size: number;
  archived: boolean;
  signature: string;
  signing_key_id: string;
  created_at: string;
}

export interface PlanChangedEvent {
  user_id: string;
}

export interface DeploymentChangedEvent {
  id: string;
  project_id: string;
  /** The state after the change, so that a replica can update its view without a read. */
  state: string;
  updated_at: string;
}

export interface DeviceStatusChangedEvent {
  deployment_id: string;
  device_id: string;
  /** The device's highest status in the deployment now. */
  status: string;
  rank: number;
  rolled_back: boolean;
}

export interface DeviceForgottenEvent {
  /** The device's UUID. */
  device_id: string;
}

export interface AuditRecordedEvent {
  id: string;
  project_id: string;
  action: string;
  /** `system` for what a deployment did by itself (actor_id names the service). */
  actor_type: 'user' | 'project_token' | 'system';
  actor_id: string;
  token_prefix: string;
  target_type: string;
  target_id: string;
  created_at: string;
  details: Record<string, unknown>;
}
