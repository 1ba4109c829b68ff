import type { Deferral } from '@ota/decision';
import { profileIn } from '@ota/manifest';
import { randomUUID } from 'node:crypto';
import { alreadyExists, conflict, invalidArgument, notFound } from '@ota/errors';
import { byUuid, deviceUuid, pageOfSorted } from '@ota/ids';
import { newDevice } from './new-device';
import { RecentCounts } from './recent-counts';
import {
  DECISION_RECORDS_KEPT_PER_DEVICE,
  DEFAULT_CHANNEL_NAME,
  type Channel,
  type DecisionRecord,
  type DecisionRecordQuery,
  type Device,
  type DeviceChange,
  type DeviceCount,
  type DeviceFilter,
  type DevicePageRead,
  type FleetDevice,
  type FleetGroups,
  type Group,
  type NewDeviceFields,
  type Project,
  type ProjectSettings,
  type StatusReportWrite,
} from './model';
import type { DeviceTargets, RegistryStore } from './ports';
import { slugCandidate, slugify } from './slug';

const MAX_SLUG_ATTEMPTS = 50;
// About 0.5 MB of gRPC message per page: well under the 8 MB message limit.
const DEVICE_PAGE_SIZE = 1000;
const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const NAME_RULE = 'name must be 1 to 64 letters, digits, dots, dashes or underscores';
/** Target sets whose recent device count each replica keeps (a few dozen bytes each). */
const RECENT_COUNTS_KEPT = 10_000;

export interface RegistryDeps {
  store: RegistryStore;
  now?: () => Date;
  /** Logs work that failed beside an answer (a trim of decision records), which a later run makes good. */
  warn?: (error: unknown, message: string) => void;
}

/** The registry's use cases. Storage comes in through the RegistryStore port. */
/** A channel that cannot be deleted for its devices says how many, up to this many. */
const CHANNEL_DEVICES_NAMED_UP_TO = 1_000;

export class Registry {
  private readonly store: RegistryStore;
  private readonly now: () => Date;
  private readonly warn: (error: unknown, message: string) => void;
  private readonly recentCounts: RecentCounts<DeviceCount>;

  constructor(deps: RegistryDeps) {
    this.store = deps.store;
    this.now = deps.now ?? (() => new Date());
    this.warn = deps.warn ?? (() => undefined);
    this.recentCounts = new RecentCounts<DeviceCount>(RECENT_COUNTS_KEPT, () => this.now().getTime());
  }

  async createProject(ownerId: string, name: string): Promise<{ project: Project; defaultChannel: Channel }> {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 200) throw invalidArgument('name must be 1 to 200 characters');
    const createdAt = this.now();
    const projectId = randomUUID();
    // The default channel goes in first: a channel without its project is invisible, while a
    // project without its default channel could not take devices.
    const defaultChannel: Channel = { id: randomUUID(), projectId, name: DEFAULT_CHANNEL_NAME, isDefault: true, createdAt };
    await this.store.insertChannel(defaultChannel);
    const base = slugify(trimmed);
    for (let attempt = 1; attempt <= MAX_SLUG_ATTEMPTS; attempt += 1) {
      const project: Project = { id: projectId, name: trimmed, slug: slugCandidate(base, attempt), ownerId, createdAt, requireEspImage: false };
      if ((await this.store.insertProject(project)) === 'inserted') return { project, defaultChannel };
    }
    throw alreadyExists(`too many projects are named like "${trimmed}"`);
  }

  async getProject(projectId: string): Promise<Project> {
    const project = await this.store.findProject(projectId);
    if (!project) throw notFound('project not found');
    return project;
  }

  listProjects(ownerId: string): Promise<Project[]> {
    return this.store.listProjects(ownerId);
  }

  async updateProjectSettings(projectId: string, settings: ProjectSettings): Promise<Project> {
    const project = await this.store.updateProjectSettings(projectId, settings);
    if (!project) throw notFound('project not found');
    return project;
  }

  async deleteProject(projectId: string): Promise<void> {
    await this.store.deleteProject(await this.getProject(projectId));
  }

  /** The channels by name, each with its device count. */
  async listChannels(projectId: string): Promise<Array<Channel & { deviceCount: number; deviceCountEstimated: boolean }>> {
    const channels = await this.store.listChannels(projectId);
    const { counts, estimated } = await this.store.countDevicesPerChannel(projectId, channels.map((channel) => channel.id));
    return channels.map((channel) => ({ ...channel, deviceCount: counts.get(channel.id) ?? 0, deviceCountEstimated: estimated.has(channel.id) }));
  }

  renameChannel(projectId: string, channelId: string, name: string): Promise<Channel> {
    return this.renameNamed('channel', name, () => this.store.renameChannel(projectId, channelId, name), () => this.store.findChannel(projectId, channelId));
  }

  /**
   * The default channel is where new devices land, and a device is always on one channel: neither
   * the default nor a channel with devices is deleted (409). Deployments that target it are the
   * caller's check (rollout owns them).
   */
  async deleteChannel(projectId: string, channelId: string): Promise<void> {
    const channel = await this.store.findChannel(projectId, channelId);
    if (!channel) throw notFound('channel not found');
    if (channel.isDefault) throw conflict(`"${channel.name}" is the default channel, where new devices land; it cannot be deleted`);
    // Counted exactly up to a bound (a count of a large project is otherwise an estimate).
    const { count: devices } = await this.store.countDevices(projectId, { groupIds: [], channelIds: [channelId] }, CHANNEL_DEVICES_NAMED_UP_TO + 1);
    if (devices > 0) {
      const many = devices > CHANNEL_DEVICES_NAMED_UP_TO ? `more than ${CHANNEL_DEVICES_NAMED_UP_TO}` : String(devices);
      throw conflict(`${many} device${devices === 1 ? ' is' : 's are'} on channel "${channel.name}"; move ${devices === 1 ? 'it' : 'them'} to another channel first`);
    }
    await this.store.deleteChannel(projectId, channelId);
  }

  createChannel(projectId: string, name: string): Promise<Channel> {
    return this.createNamed('channel', projectId, name, (named) => ({ ...named, isDefault: false }), (channel) => this.store.insertChannel(channel));
  }

  /** The groups by name, each with its member count. */
  async listGroups(projectId: string): Promise<Array<Group & { memberCount: number; memberCountEstimated: boolean }>> {
    const groups = await this.store.listGroups(projectId);
    const { counts, estimated } = await this.store.countMembersPerGroup(projectId, groups.map((group) => group.id));
    return groups.map((group) => ({ ...group, memberCount: counts.get(group.id) ?? 0, memberCountEstimated: estimated.has(group.id) }));
  }

  renameGroup(projectId: string, groupId: string, name: string): Promise<Group> {
    return this.renameNamed('group', name, () => this.store.renameGroup(projectId, groupId, name), () => this.store.findGroup(projectId, groupId));
  }

  /** Deployments that target it are the caller's check (rollout owns them). */
  async deleteGroup(projectId: string, groupId: string): Promise<void> {
    if (!(await this.store.findGroup(projectId, groupId))) throw notFound('group not found');
    await this.store.deleteGroup(projectId, groupId);
  }

  /**
   * Adds and removes many members at once; adding a member twice or removing a non-member is not
   * an error, and is not counted: `added` and `removed` are the memberships that changed. Ids that
   * name no device of the project are answered back, and nothing is done for them.
   */
  async changeGroupMembers(projectId: string, groupId: string, add: readonly string[], remove: readonly string[]): Promise<{ added: number; removed: number; missing: string[] }> {
    if (!(await this.store.findGroup(projectId, groupId))) throw notFound('group not found');
    const existing = await this.store.existingDeviceIds(projectId, [...add, ...remove]);
    const missing = [...new Set([...add, ...remove])].filter((id) => !existing.has(id));
    const known = (ids: readonly string[]) => [...new Set(ids)].filter((id) => existing.has(id));
    const { added, removed } = await this.store.changeMemberships(projectId, groupId, known(add), known(remove));
    return { added, removed, missing };
  }

  createGroup(projectId: string, name: string): Promise<Group> {
    return this.createNamed('group', projectId, name, (named) => named, (group) => this.store.insertGroup(group));
  }

  /*
   * Groups and channels are the project's named sets of devices: one naming rule, and a name used
   * once in the project (the store's unique index holds it under races: `name_taken`).
   */

  private async createNamed<T>(kind: 'group' | 'channel', projectId: string, name: string, make: (named: Group) => T, insert: (item: T) => Promise<'inserted' | 'name_taken'>): Promise<T> {
    if (!NAME.test(name)) throw invalidArgument(NAME_RULE);
    await this.getProject(projectId);
    const item = make({ id: randomUUID(), projectId, name, createdAt: this.now() });
    if ((await insert(item)) === 'name_taken') throw alreadyExists(`a ${kind} named "${name}" already exists`);
    return item;
  }

  private async renameNamed<T>(kind: 'group' | 'channel', name: string, rename: () => Promise<'renamed' | 'name_taken' | 'missing'>, find: () => Promise<T | null>): Promise<T> {
    if (!NAME.test(name)) throw invalidArgument(NAME_RULE);
    const renamed = await rename();
    if (renamed === 'missing') throw notFound(`${kind} not found`);
    if (renamed === 'name_taken') throw alreadyExists(`a ${kind} named "${name}" already exists`);
    const found = await find();
    // Deleted between the rename and the read.
    if (!found) throw notFound(`${kind} not found`);
    return found;
  }

  /** Adding a member twice is not an error; the device's group_ids come back ordered. */
  async setGroupMembership(projectId: string, groupId: string, deviceUuid: string, member: boolean): Promise<Device> {
    if (!(await this.store.findGroup(projectId, groupId))) throw notFound('group not found');
    const device = await this.store.setMembership(projectId, deviceUuid, groupId, member);
    if (!device) throw notFound('device not found');
    return (await this.withOrderedGroups(projectId, [device]))[0]!;
  }

  /** docs/api.md, "Records": newest first, filtered, at most `limit` (default and cap 20). */
  async listDecisionRecords(query: DecisionRecordQuery): Promise<DecisionRecord[]> {
    const limit = Math.min(Math.max(query.limit || DECISION_RECORDS_KEPT_PER_DEVICE, 1), DECISION_RECORDS_KEPT_PER_DEVICE);
    // The store holds up to 39 records between trims; what is kept is the newest 20, so the
    // filters apply to those alone and never reach an older record.
    const kept = (await this.store.listDecisionRecords(query.projectId, query.id)).slice(0, DECISION_RECORDS_KEPT_PER_DEVICE);
    return kept
      .filter((event) => (!query.since || event.createdAt >= query.since) && (!query.decision || event.decision === query.decision) && (!query.status || event.status === query.status))
      .slice(0, limit);
  }

  async listDevices(projectId: string, filter: DeviceFilter): Promise<Device[]> {
    return this.withOrderedGroups(projectId, await this.store.listDevices(projectId, filter));
  }

  /** A page of devices after the one whose UUID is `afterId`, or whose device_id is `afterDeviceId`. */
  async readDevicePage(projectId: string, filter: DeviceFilter, page: { limit: number; afterId?: string; afterDeviceId?: string }): Promise<DevicePageRead> {
    const afterId = page.afterId ?? (page.afterDeviceId ? deviceUuid(projectId, page.afterDeviceId) : undefined);
    const { ids, ...rest } = filter;
    const read = ids?.length ? await this.pageOfNamedDevices(projectId, filter, page.limit, afterId) : await this.store.readDevicePage(projectId, rest, { limit: page.limit, afterId });
    return { ...read, devices: await this.withOrderedGroups(projectId, read.devices) };
  }

  /** A page of the devices named by id (a handful, as the API allows): read at once and paged here. */
  private async pageOfNamedDevices(projectId: string, filter: DeviceFilter, limit: number, afterId: string | undefined): Promise<DevicePageRead> {
    const matching = (await this.store.listDevices(projectId, filter)).sort((a, b) => byUuid(a.id, b.id));
    const { items, ...page } = pageOfSorted(matching, (device) => device.id, limit, afterId);
    return { devices: items, ...page };
  }

  async countChipFamilies(projectId: string): Promise<{ chipFamilies: Array<{ chipFamily: string; devices: number }>; estimated: boolean }> {
    const { counts, estimated } = await this.store.countChipFamilies(projectId);
    const chipFamilies = [...counts].map(([chipFamily, devices]) => ({ chipFamily, devices })).sort((a, b) => b.devices - a.devices || a.chipFamily.localeCompare(b.chipFamily));
    return { chipFamilies, estimated };
  }

  /** The images the project's devices report running (current_hash), most-run first; devices that report none are left out. */
  async countCurrentImages(projectId: string): Promise<Array<{ sha256: string; devices: number }>> {
    const bySha = new Map<string, number>();
    // Devices may send the hash in either case; it is one image.
    // A large project's counts are estimates: a rare image may be missing, and then has no patch prepared ahead.
    for (const [reported, devices] of (await this.store.countCurrentHashes(projectId)).counts) {
      if (!/^[0-9a-fA-F]{64}$/.test(reported)) continue;
      const sha256 = reported.toLowerCase();
      bySha.set(sha256, (bySha.get(sha256) ?? 0) + devices);
    }
    return [...bySha].map(([sha256, devices]) => ({ sha256, devices })).sort((a, b) => b.devices - a.devices || a.sha256.localeCompare(b.sha256));
  }

  /** Every device of the project as a check decides on it, in pages; group ids among `groups`, in no order. */
  streamFleet(projectId: string, idPrefix: string, groups: FleetGroups): AsyncIterable<FleetDevice[]> {
    if (!/^[0-9a-f]{0,3}$/.test(idPrefix)) throw invalidArgument('id_prefix is 0 to 3 lowercase hex digits');
    return this.store.streamFleet(projectId, DEVICE_PAGE_SIZE, idPrefix, groups);
  }

  countDevices(projectId: string, targets?: DeviceTargets, atMost?: number): Promise<DeviceCount> {
    return this.store.countDevices(projectId, targets, atMost);
  }

  /** The devices the targets reach, counted at most `maxAgeMs` ago (see RecentCounts). */
  countDevicesRecently(projectId: string, targets: DeviceTargets, maxAgeMs: number): Promise<DeviceCount> {
    const key = [projectId, [...targets.groupIds].sort().join(','), [...targets.channelIds].sort().join(',')].join('|');
    return this.recentCounts.get(key, maxAgeMs, () => this.store.countDevices(projectId, targets));
  }

  async getDevice(projectId: string, key: { id: string } | { deviceId: string }): Promise<Device> {
    const device = await this.store.findDevice(projectId, key);
    if (!device) throw notFound('device not found');
    return (await this.withOrderedGroups(projectId, [device]))[0]!;
  }

  /** Pre-provisioning: the device_id must be new in the project, and the owner under the cap. */
  async createDevice(projectId: string, ownerId: string, maxDevices: number, fields: NewDeviceFields): Promise<Device> {
    const channelId = fields.channelId || (await this.store.findDefaultChannel(projectId))?.id;
    if (!channelId) throw notFound('project not found');
    if (fields.channelId && !(await this.store.findChannel(projectId, fields.channelId))) {
      throw invalidArgument('channel_id is not a channel of this project');
    }
    const at = this.now();
    const device: Device = {
      ...newDevice(projectId, fields.deviceId, { framework: fields.framework, chipFamily: fields.chipFamily }, channelId, at),
      ...profileIn(fields),
      active: fields.active,
      metadata: fields.metadata,
      tokenRequired: fields.tokenRequired,
      // A pre-provisioned device has not been seen yet.
      lastSeen: null,
    };
    const registered = await this.store.registerDevice(device, ownerId, maxDevices);
    if (registered === 'over_limit') throw invalidArgument(`the plan's device limit of ${maxDevices} is reached`);
    if (!registered.created) throw alreadyExists(`a device with device_id "${fields.deviceId}" already exists in this project`);
    return registered.device;
  }

  async updateDevice(projectId: string, id: string, change: DeviceChange): Promise<Device> {
    if (change.channelId !== undefined && !(await this.store.findChannel(projectId, change.channelId))) {
      throw invalidArgument('channel_id is not a channel of this project');
    }
    const hasChange = Object.values(change).some((value) => value !== undefined);
    const device = hasChange ? await this.store.updateDevice(projectId, id, change) : await this.store.findDevice(projectId, { id });
    if (!device) throw notFound('device not found');
    return (await this.withOrderedGroups(projectId, [device]))[0]!;
  }

  async deleteDevice(projectId: string, ownerId: string, id: string): Promise<void> {
    if (!(await this.store.deleteDevice(projectId, id, ownerId))) throw notFound('device not found');
  }

  /** docs/api.md, "Device": group_ids ordered by group name, the group UUID breaking ties. */
  private async withOrderedGroups(projectId: string, devices: Device[]): Promise<Device[]> {
    if (!devices.some((device) => device.groupIds.length > 1)) return devices;
    const groups = await this.store.listGroups(projectId);
    const rank = new Map(groups.map((group, index) => [group.id, index]));
    return devices.map((device) => ({
      ...device,
      groupIds: [...device.groupIds].sort((a, b) => (rank.get(a) ?? Infinity) - (rank.get(b) ?? Infinity) || a.localeCompare(b)),
    }));
  }

  /**
   * A status report's one update of the device, reading nothing (StatusReportWrite): the device
   * written, or null when nothing was (no such device, a refused token, or a status below the
   * stored one).
   */
  async applyStatusReport(write: StatusReportWrite): Promise<Pick<Device, 'id'> | null> {
    const id = deviceUuid(write.projectId, write.deviceId);
    return (await this.store.applyStatusReport(id, write)) ? { id } : null;
  }

  /** The device put off `deferral.deploymentId`'s offer until `deferral.until` (docs/api.md, "Deferral"). */
  deferOffer(id: string, deferral: Deferral): Promise<void> {
    return this.store.deferOffer(id, deferral);
  }
}
