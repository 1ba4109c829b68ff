import { profileMessage, profileOfMessage, type HardwareProfileMessage } from '@ota/manifest';
import { offerOf, type DecisionDeployment, type DecisionViews, type ViewSources } from '@ota/decision';
import type { Handlers } from '@ota/grpc';
import { registry as pb } from '@ota/proto';
import { checkDevice, type CheckStore, type DeviceCheckAnswer, type HealthReport, type OfferLedger } from '../domain/device-check';
import type { HealthSnapshot, HealthTallies } from '../domain/device-health';
import { reportDeviceStatus, type DeviceEventLedger } from '../domain/device-report';
import { offerStanding } from '../domain/offer-standing';
import type { Channel, Device, FleetDevice, Group, Project, ReportedProfile } from '../domain/model';
import type { MembershipChange, MembershipChanges } from '../domain/membership-changes';
import type { Registry } from '../domain/registry';

/** The methods kept for the release before, served by previous-release/handlers.ts (and listFleetBuilds by fleet-handlers.ts). */
export type PreviousReleaseMethods = 'checkInDevice' | 'recordCheck' | 'applyDeviceReport';
type RegistryHandlers = Omit<Handlers<typeof pb.RegistryServiceService>, PreviousReleaseMethods | 'listFleetBuilds'>;

/** What the check and the status report need beside the registry: the decision's views, and rollout to confirm offers and store events. */
export interface CheckDeps {
  views: DecisionViews<DecisionDeployment>;
  /** Where the views load from: the offer-standing answer reads its deployment from there (rollout's store), not from the views. */
  sources: Pick<ViewSources<DecisionDeployment>, 'loadDeployment'>;
  /** Rollout, which confirms each offer and stores each status event. */
  offers: OfferLedger;
  events: DeviceEventLedger;
  health: HealthTallies;
  store: CheckStore;
}

export function registryHandlers(registry: Registry, check: CheckDeps, membershipChanges: MembershipChanges): RegistryHandlers {
  return {
    async checkDevice(request, ctx) {
      const answer = await checkDevice(
        {
          store: check.store,
          views: check.views,
          offers: check.offers,
          health: check.health,
          warn: (error, message, deviceId) => ctx.logger.warn({ err: error, device_id: deviceId }, message),
        },
        {
          projectId: request.projectId,
          ownerId: request.ownerId,
          deviceId: request.deviceId,
          viaProjectToken: request.viaProjectToken,
          maxDevices: request.maxDevices,
          reported: reportedProfileOf(request.reported),
          currentBuildNumber: request.currentBuildNumber,
          utcOffsetMinutes: request.utcOffsetMinutes,
          health: request.health && healthReportOf(request.health),
        },
        ctx,
      );
      return checkAnswerMessage(answer);
    },
    async createProject(request) {
      const { project, defaultChannel } = await registry.createProject(request.ownerId, request.name);
      return { project: projectMessage(project), defaultChannel: channelMessage(defaultChannel) };
    },
    async updateProjectSettings(request) {
      return { project: projectMessage(await registry.updateProjectSettings(request.projectId, { requireEspImage: request.requireEspImage })) };
    },
    async getProject(request) {
      return { project: projectMessage(await registry.getProject(request.projectId)) };
    },
    async listProjects(request) {
      return { projects: (await registry.listProjects(request.ownerId)).map(projectMessage) };
    },
    async deleteProject(request) {
      await registry.deleteProject(request.projectId);
      return {};
    },
    async listGroups(request) {
      return { groups: (await registry.listGroups(request.projectId)).map(groupMessage) };
    },
    async renameGroup(request) {
      return { group: groupMessage(await registry.renameGroup(request.projectId, request.groupId, request.name)) };
    },
    async deleteGroup(request) {
      await registry.deleteGroup(request.projectId, request.groupId);
      return {};
    },
    async changeGroupMembers(request) {
      const changed = await registry.changeGroupMembers(request.projectId, request.groupId, request.addDeviceUuids, request.removeDeviceUuids);
      return { added: changed.added, removed: changed.removed, missingDeviceUuids: changed.missing };
    },
    async startMembershipChange(request) {
      const { matching, actor } = request;
      const change = await membershipChanges.start({
        projectId: request.projectId,
        groupId: request.groupId,
        action: request.action,
        matching: {
          active: matching?.active,
          groupId: matching?.groupId || undefined,
          channelId: matching?.channelId || undefined,
          chipFamily: matching?.chipFamily || undefined,
          search: matching?.search || undefined,
        },
        actor: { type: actor?.actorType ?? '', id: actor?.actorId ?? '', tokenPrefix: actor?.tokenPrefix ?? '', role: actor?.actorRole ?? '', via: actor?.actorVia ?? '' },
      });
      return membershipChangeMessage(change);
    },
    async getMembershipChange(request) {
      return membershipChangeMessage(await membershipChanges.get(request.projectId, request.groupId, request.changeId));
    },
    async createGroup(request) {
      return { group: groupMessage(await registry.createGroup(request.projectId, request.name)) };
    },
    async addGroupMember(request) {
      return { device: deviceMessage(await registry.setGroupMembership(request.projectId, request.groupId, request.deviceUuid, true)) };
    },
    async removeGroupMember(request) {
      await registry.setGroupMembership(request.projectId, request.groupId, request.deviceUuid, false);
      return {};
    },
    async listChannels(request) {
      return { channels: (await registry.listChannels(request.projectId)).map(channelMessage) };
    },
    async createChannel(request) {
      return { channel: channelMessage(await registry.createChannel(request.projectId, request.name)) };
    },
    async renameChannel(request) {
      return { channel: channelMessage(await registry.renameChannel(request.projectId, request.channelId, request.name)) };
    },
    async deleteChannel(request) {
      await registry.deleteChannel(request.projectId, request.channelId);
      return {};
    },
    async countCurrentImages(request) {
      return { images: await registry.countCurrentImages(request.projectId) };
    },
    async countChipFamilies(request) {
      return registry.countChipFamilies(request.projectId);
    },
    async listCheckEvents(request) {
      const records = await registry.listDecisionRecords({
        projectId: request.projectId,
        id: request.id,
        limit: request.limit,
        since: request.since,
        decision: request.decision || undefined,
        status: request.status || undefined,
      });
      return {
        records: records.map((record) => ({
          ...record,
          artifactBuildNumber: record.artifactBuildNumber ?? undefined,
          reportedBuildNumber: record.reportedBuildNumber ?? undefined,
        })),
      };
    },
    async getDevice(request) {
      const key = request.id ? { id: request.id } : { deviceId: request.deviceId };
      return { device: deviceMessage(await registry.getDevice(request.projectId, key)) };
    },
    async listDevices(request) {
      const filter = {
        active: request.active,
        groupId: request.groupId || undefined,
        channelId: request.channelId || undefined,
        search: request.search || undefined,
        chipFamily: request.chipFamily || undefined,
        deviceId: request.deviceId || undefined,
        ids: request.ids.length > 0 ? request.ids : undefined,
      };
      if (request.limit <= 0) {
        const devices = await registry.listDevices(request.projectId, filter);
        return { devices: devices.map(deviceMessage), total: 0, totalEstimated: false, nextAfterId: '' };
      }
      const page = await registry.readDevicePage(request.projectId, filter, {
        limit: request.limit,
        afterId: request.afterId || undefined,
        afterDeviceId: request.afterDeviceId || undefined,
      });
      return { devices: page.devices.map(deviceMessage), total: page.total.count, totalEstimated: page.total.estimated, nextAfterId: page.nextAfterId ?? '' };
    },
    async *streamDevices(request) {
      // PREVIOUS RELEASE: its rollout asks without only_these_groups, and is given every group.
      const groups = request.onlyTheseGroups ? request.groupIds : 'all';
      for await (const devices of registry.streamFleet(request.projectId, request.idPrefix, groups)) yield { devices: devices.map(fleetDeviceMessage) };
    },
    async countDevices(request) {
      const targets = { groupIds: request.groupIds, channelIds: request.channelIds };
      if (request.maxAgeMs > 0 && !request.atMost) return registry.countDevicesRecently(request.projectId, targets, request.maxAgeMs);
      return registry.countDevices(request.projectId, targets, request.atMost || undefined);
    },
    async createDevice(request) {
      const device = await registry.createDevice(request.projectId, request.ownerId, request.maxDevices, {
        deviceId: request.deviceId,
        ...profileOfMessage(request),
        channelId: request.channelId,
        active: request.active,
        metadata: request.metadata ?? {},
        tokenRequired: request.tokenRequired,
      });
      return { device: deviceMessage(device) };
    },
    async updateDevice(request) {
      const device = await registry.updateDevice(request.projectId, request.id, {
        active: request.active,
        metadata: request.metadata,
        channelId: request.channelId,
        tokenRequired: request.tokenRequired,
      });
      return { device: deviceMessage(device) };
    },
    async deleteDevice(request) {
      await registry.deleteDevice(request.projectId, request.ownerId, request.id);
      return {};
    },
    async reportDeviceStatus(request, ctx) {
      return reportDeviceStatus(
        { registry, views: check.views, events: check.events },
        {
          projectId: request.projectId,
          deviceId: request.deviceId,
          viaProjectToken: request.viaProjectToken,
          deploymentId: request.deploymentId,
          event: request.event,
          buildNumber: request.buildNumber,
          reason: request.reason,
          detailJson: request.detailJson,
          deferredUntil: request.deferredUntil,
        },
        ctx,
      );
    },
    async offerStanding(request, ctx) {
      const answer = await offerStanding(
        { registry, views: check.views, loadDeployment: check.sources.loadDeployment.bind(check.sources) },
        { projectId: request.projectId, deviceId: request.deviceId, viaProjectToken: request.viaProjectToken, deploymentId: request.deploymentId },
        ctx,
      );
      return answer.standing ? { standing: true, status: '', hold: false, message: '' } : answer;
    },
  };
}

function projectMessage(project: Project): pb.Project {
  return { id: project.id, name: project.name, slug: project.slug, ownerId: project.ownerId, createdAt: project.createdAt, requireEspImage: project.requireEspImage };
}

function groupMessage(group: Group & { memberCount?: number; memberCountEstimated?: boolean }): pb.Group {
  return { id: group.id, projectId: group.projectId, name: group.name, createdAt: group.createdAt, memberCount: group.memberCount ?? 0, memberCountEstimated: group.memberCountEstimated ?? false };
}

function channelMessage(channel: Channel & { deviceCount?: number; deviceCountEstimated?: boolean }): pb.Channel {
  return {
    id: channel.id,
    projectId: channel.projectId,
    name: channel.name,
    isDefault: channel.isDefault,
    createdAt: channel.createdAt,
    deviceCount: channel.deviceCount ?? 0,
    deviceCountEstimated: channel.deviceCountEstimated ?? false,
  };
}

export function deviceMessage(device: Device): pb.Device {
  const hardware = profileMessage(device);
  return {
    id: device.id,
    projectId: device.projectId,
    deviceId: device.deviceId,
    hardware,
    // PREVIOUS RELEASE: the same fields flat, for readers of the release before.
    ...flatHardware(hardware),
    currentBuildNumber: device.currentBuildNumber,
    currentVersionLabel: device.currentVersionLabel,
    currentHash: device.currentHash,
    lastOtaStatus: device.lastOtaStatus,
    lastOtaReason: device.lastOtaReason,
    active: device.active,
    lastSeen: device.lastSeen ?? undefined,
    lastCheckAt: device.lastCheckAt ?? undefined,
    lastCheckStatus: device.lastCheckStatus,
    channelId: device.channelId,
    groupIds: device.groupIds,
    metadata: device.metadata,
    createdAt: device.createdAt,
    tokenRequired: device.tokenRequired,
    checkCount: device.checkCount,
    health: device.health ? reportedHealthMessage(device.health) : undefined,
  };
}

/** PREVIOUS RELEASE: the hardware fields the release before reads flat on a device (it has no chip revision or secure version). */
function flatHardware(hardware: HardwareProfileMessage): Omit<HardwareProfileMessage, 'chipRevision' | 'secureVersion'> {
  const { chipRevision: _chipRevision, secureVersion: _secureVersion, ...flat } = hardware;
  return flat;
}

/** A device as a check decides on it: the fields of its profile, the rest empty. */
function fleetDeviceMessage(device: FleetDevice): pb.Device {
  const hardware = profileMessage(device);
  // PREVIOUS RELEASE: the hardware flat too, for readers of the release before.
  return pb.Device.fromPartial({ id: device.id, deviceId: device.deviceId, hardware, ...flatHardware(hardware), active: device.active, channelId: device.channelId, groupIds: device.groupIds, currentBuildNumber: device.currentBuildNumber });
}

function reportedHealthMessage(snapshot: HealthSnapshot): pb.ReportedHealth {
  const { build, at, ...health } = snapshot;
  return { health, buildNumber: build, reportedAt: at };
}

export function reportedProfileOf(reported: pb.ReportedProfile | undefined): ReportedProfile {
  const profile = reported ?? pb.ReportedProfile.fromPartial({});
  return {
    framework: profile.framework,
    chipFamily: profile.chipFamily,
    boardId: profile.boardId,
    hardwareRevision: profile.hardwareRevision,
    partitionProfile: profile.partitionProfile,
    nvsSchemaVersion: profile.nvsSchemaVersion,
    securityMode: profile.securityMode,
    versionLabel: profile.versionLabel,
    currentHash: profile.currentHash,
    chipRevision: profile.chipRevision,
    secureVersion: profile.secureVersion,
  };
}

function healthReportOf(message: pb.DeviceHealth): HealthReport {
  return {
    resetReason: message.resetReason,
    boots: message.boots,
    abnormalBoots: message.abnormalBoots,
    uptimeSeconds: message.uptimeSeconds,
    ...(message.minFreeHeap !== undefined ? { minFreeHeap: message.minFreeHeap } : {}),
  };
}

function checkAnswerMessage(answer: DeviceCheckAnswer): pb.CheckDeviceResponse {
  if (answer.status !== 'offered') {
    return { status: answer.status, message: answer.message, offer: undefined, windowOpensAt: answer.windowOpensAt, deferredUntil: answer.deferredUntil, checkAgainAt: answer.checkAgainAt };
  }
  return { status: answer.status, message: answer.message, offer: offerOf(answer.deploymentId, answer.artifact), windowOpensAt: undefined, deferredUntil: undefined, checkAgainAt: undefined };
}

export function membershipChangeMessage(change: MembershipChange): pb.MembershipChange {
  const { matching } = change;
  return {
    id: change.id,
    projectId: change.projectId,
    groupId: change.groupId,
    action: change.action,
    matching: { active: matching.active, groupId: matching.groupId ?? '', channelId: matching.channelId ?? '', chipFamily: matching.chipFamily ?? '', search: matching.search ?? '' },
    state: change.state,
    devicesMatched: change.devicesMatched,
    added: change.added,
    removed: change.removed,
    shareDone: change.bucketsDone / 16 ** change.level,
    devicesExpected: change.devicesExpected,
    createdAt: change.createdAt,
    finishedAt: change.finishedAt ?? undefined,
    detail: change.detail,
  };
}
