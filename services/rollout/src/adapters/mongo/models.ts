import type { PlaceDoc } from '@ota/mongo';
import { Schema, type Connection } from 'mongoose';
import type { DeploymentState, GuardrailPause } from '../../domain/model';

// Rollout's documents. Field names are snake_case: they are what an operator sees in the database.

/** One period's device health on one side of a deployment from one registry replica; its _id is `${deployment_id}:${side}:${period start ms}:${source}`. */
export interface HealthTallyDoc {
  _id: string;
  project_id: string;
  deployment_id: string;
  side: string;
  period_start: Date;
  device_seconds: number;
  abnormal_resets: number;
  devices: number;
  /** The registry replica that wrote it. */
  source?: string;
}

export interface DeploymentDoc {
  _id: string;
  project_id: string;
  artifact_id: string;
  build_number: number;
  version_label: string;
  state: DeploymentState;
  target_group_ids: string[];
  target_channel_ids: string[];
  rollout_percentage: number;
  rollout_strategy: string;
  notes: string;
  created_at: Date;
  started_at: Date | null;
  updated_at: Date;
  version: number;
  /** Absent on deployments stored before guardrails existed: none. */
  guardrails?: GuardrailsDoc;
  stages?: StageDoc[];
  stage_index?: number;
  stage_entered_at?: Date | null;
  guardrail_pause?: GuardrailPauseDoc | null;
  guardrails_judged_since?: Date | null;
  /** Absent on deployments stored before maintenance windows existed, and null without them: offered at any time. */
  maintenance?: MaintenanceDoc | null;
  /** Absent on deployments stored before offer caps existed, and null without them: no cap. */
  caps?: { offers_per_minute: number | null; max_in_progress: number | null } | null;
}

export interface MaintenanceDoc {
  time_zone: string;
  in_device_local_time: boolean;
  windows: Array<{ days: string[]; start: string; duration_minutes: number }>;
}

export interface GuardrailsDoc {
  failure_threshold: { percent: number; min_finished: number } | null;
  reason_limits: Array<{ reason: string; count: number; window_seconds: number }>;
  confirm_timeout_seconds: number | null;
  /** Absent on deployments stored before the health guardrail existed: none. */
  health_regression?: { margin_percent: number; significance: number; min_devices: number; min_device_hours: number } | null;
}

export interface StageDoc {
  percentage: number;
  min_wait_seconds: number;
  approval_required: boolean;
}

export interface GuardrailPauseDoc {
  guardrail: GuardrailPause['guardrail'];
  detail: string;
  figures: Record<string, number>;
  at: Date;
}

export type TransitionFields = Pick<DeploymentDoc, 'state' | 'rollout_percentage' | 'started_at' | 'updated_at' | 'stage_index' | 'stage_entered_at' | 'guardrail_pause' | 'guardrails_judged_since'>;

/** One applied transition; `_id` is `${deployment_id}:${version}`, so each version is claimed once. */
/** A fence against new deployments of a build, group or channel being archived or deleted (collection `retired_targets`). */
export interface RetiredTargetDoc {
  _id: string;
  /** "artifact:<id>", "group:<id>" or "channel:<id>". */
  target: string;
  project_id: string;
  at: Date;
  /** False while its retirement reads what is in its way; absent on fences from before this field (settled). */
  settled?: boolean;
}

export interface TransitionDoc {
  _id: string;
  deployment_id: string;
  version: number;
  set: TransitionFields;
}

/**
 * Only inserts, never updates (FerretDB makes inserts atomic, not updates), of three kinds:
 * - `status`: that a device reached a status in a deployment. `_id` is
 *   `${deployment}:${device}:${status}`, so each status is stored once.
 * - `failure`: one `failed` report; `_id` adds a random suffix, so that every report counts.
 * - `count`: one step of the status the device is counted under (CountedStep), from `from` to
 *   `status`. `_id` is `${deployment}:${device}:from:${from}`, so a device leaves each status once.
 */
export interface DeviceEventDoc {
  _id: string;
  kind: 'status' | 'failure' | 'count';
  deployment_id: string;
  project_id: string;
  device_id: string;
  status: string;
  rank: number;
  /**
   * `bitOf(status)` on status documents, so the store can count devices per status; 0 on failures;
   * `bitOf(status) - bitOf(from)` on steps, so that a device's steps sum to `bitOf(counted) - 1`.
   */
  bit: number;
  /** On steps: the status the device was counted under before. */
  from?: string;
  reason: string;
  at: Date;
  /**
   * On status documents, the device's page buckets within the deployment (devicePageKeys of the
   * deployment id and the device UUID): a page of the deployment's states is read one bucket at a time.
   */
  page_keys?: string[];
  /**
   * The report the event came from, carried in its insert (`at` is the report's time): present on
   * the first report of each status and on every failure, absent on offers and older documents.
   */
  report_id?: string;
  event?: string;
  build_number?: number | null;
  detail_json?: string;
  /**
   * On the status document of a first `downloaded` report: how the image came (downloads.ts), and
   * the bytes of the patch applied; counted per deployment by how.
   */
  download?: 'image' | 'patch' | 'fell_back';
  patch_bytes?: number;
}

/**
 * A report stored on its own: a device's first `offered` of a deployment (`_id`
 * `${deployment}:${device}:offered`, `report_id` the report's id), or a repeat that a release
 * before this one stored (`_id` the report's id). Read for the timeline.
 */
export interface DeviceReportDoc {
  _id: string;
  /** The report's id where `_id` is not (a first `offered`). */
  report_id?: string;
  project_id: string;
  deployment_id: string;
  device_id: string;
  event: string;
  status: string;
  build_number: number | null;
  reason: string;
  detail_json: string;
  created_at: Date;
  /** A deferred report's time to offer again. */
  deferred_until?: Date;
}

/** Failures per reason as a list: reasons come from devices, and are not used as field names. */
export type ReasonCounts = Array<{ reason: string; count: number }>;

/** `_id` is `${deployment_id}:${version}`: a version is inserted once, by whichever replica comes first. */
export interface SnapshotDoc {
  _id: string;
  deployment_id: string;
  version: number;
  through: Date;
  by_status: Record<string, number>;
  failures_by_reason: ReasonCounts;
  recounted_at: Date;
}

/** The changes one replica counted for one deployment in one second; only ever inserted. */
export interface DeltaDoc {
  _id: string;
  deployment_id: string;
  second: Date;
  by_status: Record<string, number>;
  failures_by_reason: ReasonCounts;
}

const options = { versionKey: false as const, strict: 'throw' as const };

export function registerRolloutModels(connection: Connection) {
  const deploymentSchema = new Schema<DeploymentDoc>(
    {
      _id: String,
      project_id: { type: String, required: true },
      artifact_id: { type: String, required: true },
      build_number: Number,
      version_label: String,
      state: String,
      target_group_ids: [String],
      target_channel_ids: [String],
      rollout_percentage: Number,
      rollout_strategy: String,
      notes: String,
      created_at: Date,
      started_at: { type: Date, default: null },
      updated_at: Date,
      version: Number,
      guardrails: Schema.Types.Mixed,
      stages: Schema.Types.Mixed,
      stage_index: Number,
      stage_entered_at: { type: Date, default: null },
      guardrail_pause: Schema.Types.Mixed,
      maintenance: Schema.Types.Mixed,
      caps: Schema.Types.Mixed,
    },
    options,
  );
  deploymentSchema.index({ project_id: 1, created_at: -1 });
  deploymentSchema.index({ state: 1 });

  const deviceEventSchema = new Schema<DeviceEventDoc>(
    {
      _id: String,
      kind: String,
      deployment_id: String,
      project_id: String,
      device_id: String,
      status: String,
      rank: Number,
      bit: Number,
      from: String,
      reason: String,
      at: Date,
      report_id: String,
      event: String,
      build_number: Number,
      detail_json: String,
      download: String,
      patch_bytes: Number,
      page_keys: { type: [String], default: undefined },
    },
    options,
  );
  deviceEventSchema.index({ deployment_id: 1, device_id: 1, kind: 1, rank: -1 });
  // A page of a deployment's per-device states reads one bucket at a time by this key.
  deviceEventSchema.index({ page_keys: 1 });
  deviceEventSchema.index({ device_id: 1, status: 1 });
  deviceEventSchema.index({ project_id: 1, device_id: 1 });
  // A deployment's downloads are counted by how they came from these alone.
  deviceEventSchema.index({ deployment_id: 1, download: 1 });

  const deviceReportSchema = new Schema<DeviceReportDoc>(
    {
      _id: String,
      report_id: String,
      project_id: String,
      deployment_id: String,
      device_id: String,
      event: String,
      status: String,
      build_number: { type: Number, default: null },
      reason: String,
      detail_json: String,
      created_at: Date,
      deferred_until: Date,
    },
    options,
  );
  deviceReportSchema.index({ device_id: 1, created_at: -1 });
  deviceReportSchema.index({ deployment_id: 1, event: 1 });

  const transitionSchema = new Schema<TransitionDoc>({ _id: String, deployment_id: String, version: Number, set: Schema.Types.Mixed }, options);
  transitionSchema.index({ deployment_id: 1, version: -1 });

  const retiredTargetSchema = new Schema<RetiredTargetDoc>({ _id: String, target: String, project_id: String, at: Date, settled: Boolean }, options);
  retiredTargetSchema.index({ target: 1 });

  const snapshotSchema = new Schema<SnapshotDoc>(
    { _id: String, deployment_id: String, version: Number, through: Date, by_status: Schema.Types.Mixed, failures_by_reason: Schema.Types.Mixed, recounted_at: Date },
    options,
  );
  snapshotSchema.index({ deployment_id: 1, version: -1 });
  const offerSlotSchema = new Schema<PlaceDoc>({ _id: String, scope: String, place: Number }, options);
  offerSlotSchema.index({ scope: 1 });
  const healthTallySchema = new Schema<HealthTallyDoc>(
    { _id: String, project_id: String, deployment_id: String, side: String, period_start: Date, device_seconds: Number, abnormal_resets: Number, devices: Number, source: String },
    options,
  );
  healthTallySchema.index({ deployment_id: 1, period_start: 1 });
  const deltaSchema = new Schema<DeltaDoc>({ _id: String, deployment_id: String, second: Date, by_status: Schema.Types.Mixed, failures_by_reason: Schema.Types.Mixed }, options);
  deltaSchema.index({ deployment_id: 1, second: 1 });
  return {
    Deployment: connection.model<DeploymentDoc>('Deployment', deploymentSchema, 'deployments'),
    Transition: connection.model<TransitionDoc>('Transition', transitionSchema, 'deployment_transitions'),
    RetiredTarget: connection.model<RetiredTargetDoc>('RetiredTarget', retiredTargetSchema, 'retired_targets'),
    DeviceEvent: connection.model<DeviceEventDoc>('DeviceEvent', deviceEventSchema, 'device_events'),
    // The data migrations that read every document, and so are run once.
    DataMigration: connection.model<{ _id: string; at: Date }>('DataMigration', new Schema<{ _id: string; at: Date }>({ _id: String, at: Date }, options), 'data_migrations'),
    DeviceReport: connection.model<DeviceReportDoc>('DeviceReport', deviceReportSchema, 'device_reports'),
    Snapshot: connection.model<SnapshotDoc>('StatusCountSnapshot', snapshotSchema, 'status_count_snapshots'),
    Delta: connection.model<DeltaDoc>('StatusCountDelta', deltaSchema, 'status_count_deltas'),
    HealthTally: connection.model<HealthTallyDoc>('HealthTally', healthTallySchema, 'health_tallies'),
    OfferSlot: connection.model<PlaceDoc>('OfferSlot', offerSlotSchema, 'offer_slots'),
  };
}

export type RolloutModels = ReturnType<typeof registerRolloutModels>;
