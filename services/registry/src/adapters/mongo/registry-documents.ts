// How registry's model maps onto its stored documents and back: the mappers and filters the store
// (mongo-registry-store.ts) and the bulk membership changes (membership-change-store.ts) share.
import { profileFields, profileOf } from '@ota/manifest';
import { devicePageKeys } from '@ota/ids';
import type { HealthSnapshot } from '../../domain/device-health';
import { heartbeatConditions } from '../../domain/heartbeat-rule';
import type { Channel, DecisionRecord, Device, DeviceFilter, Group, Project, ReportedProfile } from '../../domain/model';
import { encodeDecisionRecordEntry } from './decision-record-entry';
import type { ChannelDoc, DecisionRecordDoc, DecisionRecordEntry, DeviceDoc, GroupDoc, HealthDoc, MembershipDoc, ProjectDoc } from './models';

const DEVICE_FIELD_OF = { active: 'active', tokenRequired: 'token_required' } as const satisfies Record<string, keyof DeviceDoc>;

/** The heartbeat rule's conditions as a filter that a device which may have a heartbeat passes. */
function heartbeatFilterOf(viaProjectToken: boolean): Record<string, { $ne: boolean }> {
  return Object.fromEntries(heartbeatConditions(viaProjectToken).map((condition) => [DEVICE_FIELD_OF[condition.field], { $ne: condition.refusedWhen }]));
}

// Built once: every check asks for one of the two.
const HEARTBEAT_FILTERS = { viaProjectToken: heartbeatFilterOf(true), viaOwnToken: heartbeatFilterOf(false) };

export function heartbeatFilter(viaProjectToken: boolean): Record<string, { $ne: boolean }> {
  return viaProjectToken ? HEARTBEAT_FILTERS.viaProjectToken : HEARTBEAT_FILTERS.viaOwnToken;
}

/** The stored fields of a change to a device. */
export function changedFields(set: Partial<Device>): Partial<DeviceDoc> {
  const fields: Partial<DeviceDoc> = {};
  if (set.lastOtaStatus !== undefined) fields.last_ota_status = set.lastOtaStatus;
  if (set.lastOtaReason !== undefined) fields.last_ota_reason = set.lastOtaReason;
  if (set.currentBuildNumber !== undefined) fields.current_build_number = set.currentBuildNumber;
  if (set.active !== undefined) fields.active = set.active;
  if (set.channelId !== undefined) fields.channel_id = set.channelId;
  if (set.metadata !== undefined) fields.metadata = set.metadata;
  if (set.tokenRequired !== undefined) fields.token_required = set.tokenRequired;
  return fields;
}

/** The fields a check updates. Dimensions the request left out keep their stored value. */
export function heartbeatFields(reported: ReportedProfile, at: Date): Partial<DeviceDoc> {
  const fields: Partial<DeviceDoc> = {
    last_seen: at,
    framework: reported.framework,
    chip_family: reported.chipFamily,
  };
  if (reported.boardId !== undefined) fields.board_id = reported.boardId;
  if (reported.hardwareRevision !== undefined) fields.hardware_revision = reported.hardwareRevision;
  if (reported.partitionProfile !== undefined) fields.partition_profile = reported.partitionProfile;
  if (reported.nvsSchemaVersion !== undefined) fields.nvs_schema_version = reported.nvsSchemaVersion;
  if (reported.securityMode !== undefined) fields.security_mode = reported.securityMode;
  if (reported.chipRevision !== undefined) fields.chip_revision = reported.chipRevision;
  if (reported.secureVersion !== undefined) fields.secure_version = reported.secureVersion;
  if (reported.versionLabel !== undefined) fields.current_version_label = reported.versionLabel;
  if (reported.currentHash !== undefined) fields.current_hash = reported.currentHash;
  return fields;
}

export function decisionRecordDoc(id: string, seq: number, event: DecisionRecord): DecisionRecordDoc {
  const entry: DecisionRecordEntry = {
    seq,
    id: event.id,
    created_at: event.createdAt,
    decision: event.decision,
    status: event.status,
    deployment_id: event.deploymentId,
    artifact_build_number: event.artifactBuildNumber,
    reported_build_number: event.reportedBuildNumber,
    reported_version: event.reportedVersion,
    message: event.message,
  };
  return { _id: event.id, device_id: id, seq, entry: encodeDecisionRecordEntry(entry) };
}

export function projectOf(doc: ProjectDoc): Project {
  return { id: doc._id, name: doc.name, slug: doc.slug, ownerId: doc.owner_id, createdAt: doc.created_at, requireEspImage: doc.require_esp_image ?? false };
}

export function groupOf(doc: GroupDoc): Group {
  return { id: doc._id, projectId: doc.project_id, name: doc.name, createdAt: doc.created_at };
}

export function channelOf(doc: ChannelDoc): Channel {
  return { id: doc._id, projectId: doc.project_id, name: doc.name, isDefault: doc.is_default, createdAt: doc.created_at };
}

/** The device of a document, with its groups as its memberships say (`groupIds`, read beside it). */
export function deviceOf(doc: DeviceDoc, groupIds: string[]): Device {
  return {
    id: doc._id,
    projectId: doc.project_id,
    deviceId: doc.device_id,
    ...profileOf(doc),
    currentBuildNumber: doc.current_build_number ?? 0,
    currentVersionLabel: doc.current_version_label ?? '',
    currentHash: doc.current_hash ?? '',
    lastOtaStatus: doc.last_ota_status ?? '',
    lastOtaReason: doc.last_ota_reason ?? '',
    active: doc.active ?? true,
    lastSeen: doc.last_seen ?? null,
    lastCheckAt: doc.last_check_at ?? null,
    lastCheckStatus: doc.last_check_status ?? '',
    channelId: doc.channel_id ?? '',
    groupIds,
    metadata: doc.metadata ?? {},
    createdAt: doc.created_at,
    tokenRequired: doc.token_required ?? false,
    checkCount: doc.check_count ?? 0,
    health: doc.health ? healthOf(doc.health) : null,
    deferral: doc.deferral ? { deploymentId: doc.deferral.deployment_id, until: doc.deferral.until } : null,
  };
}

export function healthDocOf(health: HealthSnapshot): HealthDoc {
  return {
    build: health.build,
    reset_reason: health.resetReason,
    boots: health.boots,
    abnormal_boots: health.abnormalBoots,
    uptime_seconds: health.uptimeSeconds,
    ...(health.minFreeHeap !== undefined ? { min_free_heap: health.minFreeHeap } : {}),
    at: health.at,
  };
}

export function healthOf(doc: HealthDoc): HealthSnapshot {
  return {
    build: doc.build,
    resetReason: doc.reset_reason,
    boots: doc.boots,
    abnormalBoots: doc.abnormal_boots,
    uptimeSeconds: doc.uptime_seconds,
    ...(doc.min_free_heap !== undefined ? { minFreeHeap: doc.min_free_heap } : {}),
    at: doc.at,
  };
}

export function docOf(device: Device, place: number): DeviceDoc {
  return {
    _id: device.id,
    project_id: device.projectId,
    device_id: device.deviceId,
    ...profileFields(device),
    current_build_number: device.currentBuildNumber,
    current_version_label: device.currentVersionLabel,
    current_hash: device.currentHash,
    last_ota_status: device.lastOtaStatus,
    last_ota_reason: device.lastOtaReason,
    active: device.active,
    last_seen: device.lastSeen,
    last_check_at: device.lastCheckAt,
    last_check_status: device.lastCheckStatus,
    channel_id: device.channelId,
    metadata: device.metadata,
    created_at: device.createdAt,
    place,
    page_keys: devicePageKeys(device.projectId, device.id),
    token_required: device.tokenRequired,
    check_count: device.checkCount,
    ...(device.health ? { health: healthDocOf(device.health) } : {}),
  };
}

/** The membership document of a device in a group: the only record of the group's members. */
export function membershipOf(projectId: string, groupId: string, deviceUuid: string): MembershipDoc {
  return { _id: `${groupId}:${deviceUuid}`, project_id: projectId, group_id: groupId, device_id: deviceUuid, group_keys: devicePageKeys(groupId, deviceUuid), page_keys: devicePageKeys(projectId, deviceUuid) };
}

/**
 * The filters of a device list that the store matches by equality on the device document (and
 * FerretDB hands to PostgreSQL). A group is not one of them: its members are read from the
 * memberships (mongo-registry-store.ts, readGroupPage).
 */
export function equalityFilterOf(projectId: string, filter: DeviceFilter): Record<string, unknown> {
  const query: Record<string, unknown> = { project_id: projectId };
  if (filter.active !== undefined) query.active = filter.active;
  if (filter.channelId) query.channel_id = filter.channelId;
  if (filter.chipFamily) query.chip_family = filter.chipFamily;
  if (filter.deviceId) query.device_id = filter.deviceId;
  return query;
}

/** Whether a device document matches an equality filter of equalityFilterOf, as the store would judge it. */
export function matchesEquality(doc: DeviceDoc, equality: Record<string, unknown>): boolean {
  return Object.entries(equality).every(([field, value]) => (doc as unknown as Record<string, unknown>)[field] === value);
}
