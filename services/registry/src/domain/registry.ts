import { randomUUID } from 'node:crypto';
import { alreadyExists, invalidArgument, notFound } from '@ota/errors';
import { deviceReportChange } from './device-report';
import { DEFAULT_CHANNEL_NAME, type Channel, type CheckInResult, type Device, type Project, type ReportedProfile } from './model';
import type { RegistryStore } from './registry-store';
import { slugCandidate, slugify } from './slug';

const MAX_SLUG_ATTEMPTS = 50;
const CHANNEL_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export interface RegistryDeps {
  store: RegistryStore;
  now?: () => Date;
}

/** The registry's use cases. Storage comes in through the RegistryStore port. */
export class Registry {
  private readonly store: RegistryStore;
  private readonly now: () => Date;

  constructor(deps: RegistryDeps) {
    this.store = deps.store;
    this.now = deps.now ?? (() => new Date());
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
      const project: Project = { id: projectId, name: trimmed, slug: slugCandidate(base, attempt), ownerId, createdAt };
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

  listChannels(projectId: string): Promise<Channel[]> {
    return this.store.listChannels(projectId);
  }

  async createChannel(projectId: string, name: string): Promise<Channel> {
    if (!CHANNEL_NAME.test(name)) throw invalidArgument('name must be 1 to 64 letters, digits, dots, dashes or underscores');
    await this.getProject(projectId);
    const channel: Channel = { id: randomUUID(), projectId, name, isDefault: false, createdAt: this.now() };
    if ((await this.store.insertChannel(channel)) === 'name_taken') throw alreadyExists(`a channel named "${name}" already exists`);
    return channel;
  }

  /**
   * The registry half of a device check (decisions.md section 5, steps 2 to 4): an unknown device
   * is registered within the owner's cap, an inactive one is reported as such, and an active one
   * gets its heartbeat and reported fields recorded.
   */
  async checkInDevice(input: {
    projectId: string;
    ownerId: string;
    deviceId: string;
    reported: ReportedProfile;
    registerIfUnknown: boolean;
    maxDevices: number;
  }): Promise<CheckInResult> {
    const at = this.now();
    const updated = await this.store.recordHeartbeat(input.projectId, input.deviceId, input.reported, at);
    if (updated) return { outcome: 'known', device: updated };

    const existing = await this.store.findDevice(input.projectId, { deviceId: input.deviceId });
    if (existing) return { outcome: 'inactive', device: existing };
    if (!input.registerIfUnknown) throw notFound('device not found');

    const defaultChannel = await this.store.findDefaultChannel(input.projectId);
    if (!defaultChannel) throw notFound('project not found');
    const registered = await this.store.registerDevice(
      newDevice(input.projectId, input.deviceId, input.reported, defaultChannel.id, at),
      input.ownerId,
      input.maxDevices,
    );
    if (registered === 'over_limit') return { outcome: 'over_limit' };
    if (registered.created) return { outcome: 'registered', device: registered.device };
    // Lost a race with a concurrent first check of the same device: record this heartbeat too.
    const device = await this.store.recordHeartbeat(input.projectId, input.deviceId, input.reported, at);
    return device ? { outcome: 'known', device } : { outcome: 'inactive', device: registered.device };
  }

  listDevices(projectId: string): Promise<Device[]> {
    return this.store.listDevices(projectId);
  }

  async getDevice(projectId: string, key: { id: string } | { deviceId: string }): Promise<Device> {
    const device = await this.store.findDevice(projectId, key);
    if (!device) throw notFound('device not found');
    return device;
  }

  async applyDeviceReport(projectId: string, id: string, event: string, reason: string, buildNumber?: number): Promise<Device> {
    const device = await this.store.updateDevice(projectId, id, deviceReportChange(event, reason, buildNumber));
    if (!device) throw notFound('device not found');
    return device;
  }

  /** Keeps last_check_at and last_check_status in step with the decision records. */
  async recordCheckOutcome(projectId: string, id: string, status: string, at: Date): Promise<void> {
    await this.store.recordCheckOutcome(projectId, id, status, at);
  }
}

function newDevice(projectId: string, deviceId: string, reported: ReportedProfile, channelId: string, at: Date): Device {
  return {
    id: randomUUID(),
    projectId,
    deviceId,
    framework: reported.framework,
    chipFamily: reported.chipFamily,
    boardId: reported.boardId ?? '',
    hardwareRevision: reported.hardwareRevision ?? '',
    partitionProfile: reported.partitionProfile ?? '',
    nvsSchemaVersion: reported.nvsSchemaVersion ?? null,
    securityMode: reported.securityMode ?? '',
    currentBuildNumber: 0,
    currentVersionLabel: reported.versionLabel ?? '',
    currentHash: reported.currentHash ?? '',
    lastOtaStatus: '',
    lastOtaReason: '',
    active: true,
    lastSeen: at,
    lastCheckAt: null,
    lastCheckStatus: '',
    channelId,
    groupIds: [],
    metadata: {},
    createdAt: at,
  };
}
