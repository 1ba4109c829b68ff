import { imageFields, profileFields, profileOfMessage, requirementFields, requirementsIn, secureVersionRaise } from '@ota/manifest';
import type { artifacts, registry, rollout, telemetry } from '@ota/proto';
import type { Session, Token, User } from '../auth/model';
import type { Role } from '../auth/roles';
import type { DeploymentProgress } from '../use-cases/deployments';
import { ROLLOUT_STATUSES } from '@ota/vocabulary';
import { jsonDepth } from './json-limits';
import type * as R from './response-schemas';
import type { Promised } from './response-schemas';
import { DETAIL_MAX_DEPTH } from './schemas';

// The JSON shapes of the API (docs/api.md, "Objects"), from service messages.

const iso = (date: Date | undefined | null) => (date ? date.toISOString() : null);

/** A project; with `role`, the caller's role in it (a list or read of the caller's projects). */
export function projectJson(project: registry.Project, role?: Role) {
  return {
    id: project.id,
    name: project.name,
    slug: project.slug,
    owner_id: project.ownerId,
    require_esp_image: project.requireEspImage,
    created_at: iso(project.createdAt),
    ...(role ? { role } : {}),
  } satisfies Promised<typeof R.Project>;
}

export function channelJson(channel: registry.Channel) {
  return { id: channel.id, name: channel.name, is_default: channel.isDefault, created_at: iso(channel.createdAt), device_count: Number(channel.deviceCount), device_count_estimated: channel.deviceCountEstimated } satisfies Promised<typeof R.Channel>;
}

/** A token as the API shows it; `maker` is the person who made it, when known. */
export function tokenJson(token: Token, maker: User | null, raw?: string) {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    scope: token.scope || (token.kind === 'personal' ? 'personal' : token.kind),
    role: token.role,
    created_at: iso(token.createdAt),
    created_by: maker && { user_id: maker.id, email: maker.email },
    expires_at: iso(token.expiresAt),
    single_sign_on: token.signIn !== null,
    last_used_at: iso(token.lastUsedAt),
    revoked_at: iso(token.revokedAt),
    ...(raw ? { token: raw } : {}),
  } satisfies Promised<typeof R.Token>;
}

export function sessionJson(session: Session, user: User, token: Token) {
  return {
    user: { id: user.id, email: user.email, is_staff: user.isStaff },
    token_prefix: token.prefix,
    csrf_token: session.csrfToken,
    expires_at: iso(session.expiresAt),
  } satisfies Promised<typeof R.Session>;
}

export function userJson(user: User) {
  return {
    id: user.id,
    email: user.email,
    is_staff: user.isStaff,
    max_devices: user.plan.maxDevices,
    max_uploads_per_month: user.plan.maxUploadsPerMonth,
    created_at: iso(user.createdAt),
  } satisfies Promised<typeof R.User>;
}

export function groupJson(group: registry.Group) {
  return { id: group.id, name: group.name, created_at: iso(group.createdAt), member_count: Number(group.memberCount), member_count_estimated: group.memberCountEstimated } satisfies Promised<typeof R.Group>;
}

export function membershipChangeJson(change: registry.MembershipChange) {
  const matching = change.matching;
  return {
    id: change.id,
    group_id: change.groupId,
    action: change.action,
    matching: {
      ...(matching?.active !== undefined ? { active: matching.active } : {}),
      ...(matching?.groupId ? { group_id: matching.groupId } : {}),
      ...(matching?.channelId ? { channel_id: matching.channelId } : {}),
      ...(matching?.chipFamily ? { chip_family: matching.chipFamily } : {}),
      ...(matching?.search ? { search: matching.search } : {}),
    },
    state: change.state,
    share_done: change.shareDone,
    devices_expected: Number(change.devicesExpected),
    devices_matched: Number(change.devicesMatched),
    added: Number(change.added),
    removed: Number(change.removed),
    created_at: iso(change.createdAt),
    finished_at: change.finishedAt ? iso(change.finishedAt) : null,
    detail: change.detail,
  } satisfies Promised<typeof R.MembershipChange>;
}

export function signingKeyJson(key: artifacts.SigningKey) {
  return { id: key.id, name: key.name, public_key: key.publicKey, fingerprint: key.fingerprint, created_at: iso(key.createdAt) } satisfies Promised<typeof R.SigningKey>;
}

export function deviceStateJson(state: rollout.DeviceState) {
  return { device_id: state.deviceUuid, status: state.status, reason: state.reason, updated_at: iso(state.updatedAt) } satisfies Promised<typeof R.DeviceState>;
}

export function deploymentSummaryJson({ deployment, summary, targetedDevices, targetedDevicesEstimated }: DeploymentProgress) {
  const recorded = Object.values(summary.devicesByStatus).reduce((sum, count) => sum + count, 0);
  // Devices the targets reach that have no state record yet are `pending`.
  const unrecorded = Math.max(0, targetedDevices - recorded);
  const devicesByStatus = Object.fromEntries(
    ROLLOUT_STATUSES.map((status) => [status, (summary.devicesByStatus[status] ?? 0) + (status === 'pending' ? unrecorded : 0)]),
  );
  return {
    deployment_id: deployment.id,
    state: deployment.state,
    rollout_percentage: deployment.rolloutPercentage,
    targeted_devices: targetedDevices,
    targeted_devices_estimated: targetedDevicesEstimated,
    devices_by_status: devicesByStatus,
    failure_count: summary.failureCount,
    failures_by_reason: Object.entries(summary.failuresByReason)
      .map(([reason, count]) => ({ reason: reason || null, count }))
      .sort((a, b) => b.count - a.count || (a.reason ?? '').localeCompare(b.reason ?? '')),
    deferred_devices: summary.deferredDevices ?? 0,
    deferred_until: iso(summary.deferredUntil),
    held_now: { window_opens_at: iso(summary.windowOpensAt), caps_room: summary.capsRoom === undefined ? null : Number(summary.capsRoom) },
  } satisfies Promised<typeof R.DeploymentSummary>;
}

export function deploymentPreviewJson(deploymentId: string, idPrefix: string, preview: rollout.PreviewDeploymentResponse) {
  return {
    deployment_id: deploymentId,
    id_prefix: idPrefix,
    state: preview.state,
    as_if_active: preview.state !== 'active',
    rollout_percentage: preview.rolloutPercentage,
    device_count: preview.deviceCount,
    outcomes: Object.fromEntries(preview.buckets.map((bucket) => [bucket.outcome, { count: bucket.count, device_ids: bucket.deviceIds }])),
    held_now: { window_opens_at: iso(preview.windowOpensAt), caps_room: preview.capsRoom ?? null },
  } satisfies Promised<typeof R.DeploymentPreview>;
}

/**
 * A stored `detail` as readers can take it. Reports stored before the nesting limit (DETAIL_MAX_DEPTH)
 * may nest thousands of levels deep, which common JSON readers refuse: those are replaced by a note.
 */
function readableDetail(detailJson: string): Record<string, unknown> | null {
  if (!detailJson) return null;
  try {
    const detail = JSON.parse(detailJson) as Record<string, unknown>;
    if (jsonDepth(detail, DETAIL_MAX_DEPTH) <= DETAIL_MAX_DEPTH) return detail;
  } catch {
    // Past what the parser takes: the same note.
  }
  return { dropped: `this detail nested deeper than ${DETAIL_MAX_DEPTH} levels, the limit since added to status reports` };
}

export function deviceEventJson(report: rollout.DeviceReport) {
  return {
    id: report.id,
    deployment_id: report.deploymentId,
    event: report.event,
    status: report.status,
    build_number: report.buildNumber ?? null,
    reason: report.reason || null,
    detail: readableDetail(report.detailJson),
    created_at: iso(report.createdAt),
    deferred_until: iso(report.deferredUntil),
  } satisfies Promised<typeof R.DeviceEvent>;
}

export type CheckState = 'never_seen' | 'waiting_for_next_check' | 'no_pending_check';

export function deviceJson(device: registry.Device, checkState: CheckState) {
  return {
    id: device.id,
    device_id: device.deviceId,
    ...profileFields(profileOfMessage(device)),
    current_build_number: device.currentBuildNumber,
    current_version_label: device.currentVersionLabel,
    current_hash: device.currentHash,
    last_ota_status: device.lastOtaStatus,
    last_ota_reason: device.lastOtaReason,
    active: device.active,
    last_seen: iso(device.lastSeen),
    last_check_at: iso(device.lastCheckAt),
    last_check_status: device.lastCheckStatus,
    check_state: checkState,
    channel_id: device.channelId,
    group_ids: device.groupIds,
    metadata: device.metadata ?? {},
    created_at: iso(device.createdAt),
    health: device.health?.health ? reportedHealthJson(device.health.health, device.health) : null,
  } satisfies Promised<typeof R.Device>;
}

function reportedHealthJson(health: registry.DeviceHealth, report: registry.ReportedHealth) {
  return {
    reset_reason: health.resetReason,
    boots: health.boots,
    abnormal_boots: health.abnormalBoots,
    uptime_seconds: health.uptimeSeconds,
    min_free_heap: health.minFreeHeap ?? null,
    build_number: report.buildNumber,
    reported_at: iso(report.reportedAt),
  };
}

/**
 * An artifact as the API answers it. `projectBuilds` are the project's artifacts, from which a
 * raise of secure_version is derived (docs/api.md, "Raising secure_version").
 */
export function artifactJson(artifact: artifacts.Artifact, projectBuilds: readonly artifacts.Artifact[]) {
  const raise = secureVersionRaise(artifact, projectBuilds);
  return {
    id: artifact.id,
    build_number: artifact.buildNumber,
    version_label: artifact.versionLabel,
    ...requirementFields(requirementsIn(artifact)),
    checksum_sha256: artifact.checksumSha256,
    file_size: artifact.fileSize,
    release_notes: artifact.releaseNotes,
    signature: artifact.signature,
    signing_key_id: artifact.signingKeyId || null,
    archived: artifact.archived,
    image: artifact.image ? imageFields(artifact.image) : null,
    elf: artifact.elf ? { sha256: artifact.elf.sha256, size: Number(artifact.elf.size), uploaded_at: iso(artifact.elf.uploadedAt)! } : null,
    sbom: artifact.sbom ? sbomJson(artifact.sbom) : null,
    secure_version_raise: raise && { from: raise.from, to: raise.to, efuse_bits_left: raise.efuseBitsLeft },
    created_at: iso(artifact.createdAt),
  } satisfies Promised<typeof R.Artifact>;
}

/**
 * How the images of a deployment's or a build's devices came (docs/api.md, "Delta patches"):
 * `bytes_saved` is what the patches spared the devices' links, each patched device's build less its patch.
 */
export function downloadsJson(counts: rollout.CountDownloadsResponse, buildBytes: number) {
  const [patched, patchBytes] = [Number(counts.patched), Number(counts.patchBytes)];
  return {
    patched,
    whole: Number(counts.whole),
    fell_back: Number(counts.fellBack),
    patch_bytes: patchBytes,
    build_bytes: buildBytes,
    bytes_saved: Math.max(0, patched * buildBytes - patchBytes),
  };
}

export function sbomJson(sbom: artifacts.ArtifactSbom) {
  return { sha256: sbom.sha256, size: Number(sbom.size), format: sbom.format, components: Number(sbom.components), uploaded_at: iso(sbom.uploadedAt)! };
}

export function patchJson(patch: artifacts.Patch) {
  return {
    id: patch.id,
    base_artifact_id: patch.baseArtifactId,
    target_artifact_id: patch.targetArtifactId,
    base_sha256: patch.baseSha256,
    target_sha256: patch.targetSha256,
    format: patch.format,
    state: patch.state as 'queued' | 'building' | 'ready' | 'failed',
    reason: patch.reason,
    size: Number(patch.size),
    sha256: patch.sha256,
    attempts: Number(patch.attempts),
    created_at: iso(patch.createdAt),
    updated_at: iso(patch.updatedAt),
  } satisfies Promised<typeof R.Patch>;
}

export function deploymentJson(deployment: rollout.Deployment) {
  return {
    id: deployment.id,
    project_id: deployment.projectId,
    artifact_id: deployment.artifactId,
    build_number: deployment.buildNumber,
    version_label: deployment.versionLabel,
    state: deployment.state,
    target_group_ids: deployment.targetGroupIds,
    target_channel_ids: deployment.targetChannelIds,
    rollout_percentage: deployment.rolloutPercentage,
    rollout_strategy: deployment.rolloutStrategy,
    version: deployment.version,
    notes: deployment.notes,
    failure_count: deployment.failureCount,
    created_at: iso(deployment.createdAt),
    started_at: iso(deployment.startedAt),
    updated_at: iso(deployment.updatedAt),
    guardrails: guardrailsJson(deployment.guardrails),
    stages: deployment.stages.map((stage) => ({ percentage: stage.percentage, min_wait_seconds: stage.minWaitSeconds, approval_required: stage.approvalRequired })),
    stage:
      deployment.stages.length === 0
        ? null
        : {
            index: deployment.stageIndex,
            entered_at: iso(deployment.stageEnteredAt),
            next_stage_at: iso(deployment.nextStageAt),
            next_stage_needs_approval: deployment.nextStageNeedsApproval,
          },
    guardrail_pause: deployment.guardrailPause
      ? { guardrail: deployment.guardrailPause.guardrail, detail: deployment.guardrailPause.detail, figures: deployment.guardrailPause.figures, at: iso(deployment.guardrailPause.at) }
      : null,
    caps: deployment.caps ? { offers_per_minute: deployment.caps.offersPerMinute ?? null, max_in_progress: deployment.caps.maxInProgress ?? null } : null,
    maintenance_windows: deployment.maintenance
      ? {
          time_zone: deployment.maintenance.timeZone,
          in_device_local_time: deployment.maintenance.inDeviceLocalTime,
          windows: deployment.maintenance.windows.map((window) => ({ days: window.days, start: window.start, duration_minutes: window.durationMinutes })),
        }
      : null,
  } satisfies Promised<typeof R.Deployment>;
}

function guardrailsJson(guardrails: rollout.Guardrails | undefined) {
  const threshold = guardrails?.failureThreshold;
  // Rollout fills in every field it stores.
  const health = guardrails?.healthRegression;
  return {
    failure_threshold: threshold ? { percent: threshold.percent, min_finished: threshold.minFinished } : null,
    reason_limits: (guardrails?.reasonLimits ?? []).map((limit) => ({ reason: limit.reason, count: limit.count, window_seconds: limit.windowSeconds })),
    confirm_timeout_seconds: guardrails?.confirmTimeoutSeconds ?? null,
    health_regression: health
      ? { margin_percent: health.marginPercent ?? 0, significance: health.significance ?? 0, min_devices: health.minDevices ?? 0, min_device_hours: health.minDeviceHours ?? 0 }
      : null,
  } satisfies Promised<typeof R.Guardrails>;
}

/** Health sums minutes long, keyed by the start of each (docs/api.md, "Device health"). */
/**
 * Whether the health guardrail judges the deployment now, and if not, why, in words: a person must
 * never mistake a guardrail that waits for one that found nothing (docs/api.md, "Device health").
 */
export function healthJudgement(deployment: rollout.Deployment, updated: { devices: number; device_hours: number }, previous: { devices: number; device_hours: number }) {
  const guardrail = deployment.guardrails?.healthRegression;
  if (!guardrail) return { judging: false, not_judging_because: 'the deployment has no health guardrail' };
  if (deployment.state !== 'active') return { judging: false, not_judging_because: `the deployment is ${deployment.state}: only an active deployment is judged` };
  const minDevices = Number(guardrail.minDevices ?? 0);
  const minHours = guardrail.minDeviceHours ?? 0;
  const short: string[] = [];
  for (const [label, side] of [['on the build', updated], ['not yet updated', previous]] as const) {
    if (side.devices < minDevices) short.push(`${side.devices} of ${minDevices} devices ${label}`);
    if (side.device_hours < minHours) short.push(`${Math.floor(side.device_hours)} of ${minHours} device-hours ${label}`);
  }
  return short.length === 0 ? { judging: true, not_judging_because: null } : { judging: false, not_judging_because: `waiting for enough to judge: ${short.join(', ')}` };
}

export function deploymentHealthJson(health: rollout.GetDeploymentHealthResponse, periodMinutes: number, deployment: rollout.Deployment) {
  const figures = (tally: rollout.HealthTally | undefined) => {
    const hours = (tally?.deviceSeconds ?? 0) / 3600;
    const resets = tally?.abnormalResets ?? 0;
    return { devices: tally?.devices ?? 0, device_hours: hours, abnormal_resets: resets, resets_per_1000_device_hours: hours > 0 ? (resets * 1000) / hours : null };
  };
  const byStart = new Map<string, { updated?: rollout.HealthTally; previous?: rollout.HealthTally }>();
  for (const period of health.periods) {
    const start = (period.periodStart ?? new Date(0)).toISOString();
    const sides = byStart.get(start) ?? {};
    sides[period.side === 'updated' ? 'updated' : 'previous'] = period;
    byStart.set(start, sides);
  }
  const updated = figures(health.updated);
  const previous = figures(health.previous);
  return {
    ...healthJudgement(deployment, updated, previous),
    judged_since: health.judgedSince?.toISOString() ?? null,
    period_minutes: periodMinutes,
    updated,
    previous,
    periods: [...byStart].map(([start, sides]) => ({ start, updated: figures(sides.updated), previous: figures(sides.previous) })),
  } satisfies Promised<typeof R.DeploymentHealth>;
}

export function decisionJson(decision: registry.DecisionRecord) {
  return {
    id: decision.id,
    project_id: decision.projectId,
    device_id: decision.deviceId,
    created_at: iso(decision.createdAt),
    decision: decision.decision,
    status: decision.status,
    deployment_id: decision.deploymentId || null,
    artifact_build_number: decision.artifactBuildNumber ?? null,
    reported_build_number: decision.reportedBuildNumber ?? null,
    reported_version: decision.reportedVersion,
    message: decision.message,
  } satisfies Promised<typeof R.Decision>;
}

/** An audit event; `actorEmail` is the acting user's, looked up by the caller (null for tokens). */
export function auditJson(event: telemetry.AuditEvent, actorEmail: string | null = null) {
  return {
    id: event.id,
    project_id: event.projectId,
    action: event.action,
    actor_type: event.actorType,
    actor_id: event.actorId,
    actor_email: actorEmail,
    token_prefix: event.tokenPrefix,
    actor_role: event.actorRole || null,
    actor_via: event.actorVia || null,
    target_type: event.targetType,
    target_id: event.targetId,
    created_at: iso(event.createdAt),
    details: event.detailsJson ? (JSON.parse(event.detailsJson) as Record<string, unknown>) : {},
  } satisfies Promised<typeof R.AuditEvent>;
}

export function webhookJson(webhook: telemetry.Webhook, secret?: string) {
  return { id: webhook.id, url: webhook.url, events: webhook.events, created_at: iso(webhook.createdAt), ...(secret ? { secret } : {}) } satisfies Promised<typeof R.Webhook>;
}

export function webhookDeliveryJson(delivery: telemetry.WebhookDelivery) {
  return {
    id: delivery.id,
    event: delivery.event,
    audit_event_id: delivery.auditEventId,
    state: delivery.state,
    attempts: delivery.attempts.map((attempt) => ({ at: iso(attempt.at), status_code: attempt.statusCode ?? null, error: attempt.error, duration_ms: attempt.durationMs })),
    next_attempt_at: iso(delivery.nextAttemptAt),
    created_at: iso(delivery.createdAt),
    delivered_at: iso(delivery.deliveredAt),
    payload: JSON.parse(delivery.body) as unknown,
  } satisfies Promised<typeof R.WebhookDelivery>;
}
