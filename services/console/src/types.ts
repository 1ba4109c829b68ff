// The API's JSON shapes the console reads (docs/api.md; the OpenAPI document is the reference).

export interface Session {
  user: { id: string; email: string; is_staff: boolean };
  token_prefix: string;
  csrf_token: string;
  expires_at: string;
}

export interface Project {
  id: string;
  name: string;
  slug: string;
  owner_id: string;
  created_at: string;
}

export interface Device {
  id: string;
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
  last_seen: string | null;
  last_check_at: string | null;
  last_check_status: string;
  check_state: string;
  channel_id: string;
  group_ids: string[];
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface Channel {
  id: string;
  name: string;
  is_default: boolean;
  created_at: string;
}

export interface Group {
  id: string;
  name: string;
  created_at: string;
}

export interface Artifact {
  id: string;
  build_number: number;
  version_label: string;
  framework: string;
  chip_family: string;
  board_id: string;
  hardware_revision: string;
  partition_profile: string;
  min_nvs_schema_version: number | null;
  checksum_sha256: string;
  file_size: number;
  security_mode: string;
  release_notes: string;
  archived: boolean;
  created_at: string;
}

export type DeploymentState = 'draft' | 'active' | 'paused' | 'completed' | 'cancelled';

export interface Deployment {
  id: string;
  artifact_id: string;
  build_number: number;
  version_label: string;
  state: DeploymentState;
  target_group_ids: string[];
  target_channel_ids: string[];
  rollout_percentage: number;
  rollout_strategy: string;
  notes: string;
  failure_count: number;
  created_at: string;
  started_at: string | null;
  updated_at: string;
  guardrails: Guardrails;
  stages: Array<{ percentage: number; min_wait_seconds: number; approval_required: boolean }>;
  stage: { index: number; entered_at: string | null; next_stage_at: string | null; next_stage_needs_approval: boolean } | null;
  guardrail_pause: { guardrail: 'failure_threshold' | 'reason_limit'; detail: string; figures: Record<string, number>; at: string } | null;
}

export interface Guardrails {
  failure_threshold: { percent: number; min_finished: number } | null;
  reason_limits: Array<{ reason: string; count: number; window_seconds: number }>;
  confirm_timeout_seconds: number | null;
}

export const ROLLOUT_STATUSES = ['pending', 'offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed', 'failed', 'rolled_back'] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

export interface DeploymentSummary {
  deployment_id: string;
  state: DeploymentState;
  rollout_percentage: number;
  targeted_devices: number;
  devices_by_status: Record<RolloutStatus, number>;
  failure_count: number;
  failures_by_reason: Array<{ reason: string | null; count: number }>;
}

export const PREVIEW_OUTCOMES = ['offered', 'up_to_date', 'not_in_rollout', 'no_compatible_build', 'device_inactive', 'not_targeted', 'unknown_hardware'] as const;
export type PreviewOutcome = (typeof PREVIEW_OUTCOMES)[number];

export interface DeploymentPreview {
  deployment_id: string;
  state: DeploymentState;
  as_if_active: boolean;
  rollout_percentage: number;
  device_count: number;
  outcomes: Record<PreviewOutcome, { count: number; device_ids: string[] }>;
}

export interface DeviceState {
  device_id: string;
  status: RolloutStatus;
  reason: string;
  updated_at: string;
}

export interface DeviceEvent {
  id: string;
  deployment_id: string;
  event: string;
  status: RolloutStatus;
  build_number: number | null;
  reason: string | null;
  detail: Record<string, unknown> | null;
  created_at: string;
}

export interface Decision {
  id: string;
  created_at: string;
  decision: 'offered' | 'no_update';
  status: string;
  deployment_id: string | null;
  artifact_build_number: number | null;
  reported_build_number: number | null;
  reported_version: string;
  message: string;
}

export interface Token {
  id: string;
  name: string;
  prefix: string;
  scope: 'personal' | 'api' | 'device';
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  token?: string;
}

export interface SigningKey {
  id: string;
  name: string;
  public_key: string;
  fingerprint: string;
  created_at: string;
}

export interface AuditEvent {
  id: string;
  action: string;
  actor_type: string;
  actor_id: string;
  token_prefix: string;
  target_type: string;
  target_id: string;
  created_at: string;
  details: Record<string, unknown>;
}
