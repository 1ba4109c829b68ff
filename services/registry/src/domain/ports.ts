import type { Deferral } from '@ota/decision';
import type { Channel, DecisionRecord, CheckIn, DecisionRecordWrite, CountsById, CountsPerId, Device, DeviceCount, DeviceFilter, DevicePage, DevicePageRead, FleetDevice, FleetGroups, Group, Project, ProjectSettings, StatusReportWrite, WholeCheckWrite } from './model';

/** Who registers a device: its own first check, or a person pre-provisioning it. */
export type Registration = 'check' | 'provisioning';

/** The registry's storage port; `adapters/mongo` implements it. */
export interface RegistryStore {
  insertProject(project: Project): Promise<'inserted' | 'slug_taken'>;
  findProject(projectId: string): Promise<Project | null>;
  listProjects(ownerId: string): Promise<Project[]>;
  /** Sets the settings given; answers the project as it is after, or null when it does not exist. */
  updateProjectSettings(projectId: string, settings: ProjectSettings): Promise<Project | null>;
  /** Removes the project, its channels, groups and devices; gives the owner back their places. */
  deleteProject(project: Project): Promise<void>;

  insertChannel(channel: Channel): Promise<'inserted' | 'name_taken'>;
  listChannels(projectId: string): Promise<Channel[]>;
  findDefaultChannel(projectId: string): Promise<Channel | null>;
  findChannel(projectId: string, channelId: string): Promise<Channel | null>;
  renameChannel(projectId: string, channelId: string, name: string): Promise<'renamed' | 'name_taken' | 'missing'>;
  deleteChannel(projectId: string, channelId: string): Promise<void>;
  /** Devices per channel id, of the channels named; estimated in a large project (docs/api.md, "Counts in a large project"). */
  countDevicesPerChannel(projectId: string, channelIds: readonly string[]): Promise<CountsPerId>;

  insertGroup(group: Group): Promise<'inserted' | 'name_taken'>;
  listGroups(projectId: string): Promise<Group[]>;
  findGroup(projectId: string, groupId: string): Promise<Group | null>;
  renameGroup(projectId: string, groupId: string, name: string): Promise<'renamed' | 'name_taken' | 'missing'>;
  /** Removes the group and its memberships. */
  deleteGroup(projectId: string, groupId: string): Promise<void>;
  /** Members per group id, of the groups named; estimated in a large project. */
  countMembersPerGroup(projectId: string, groupIds: readonly string[]): Promise<CountsPerId>;
  /** The ids among `ids` that are devices of the project. */
  existingDeviceIds(projectId: string, ids: readonly string[]): Promise<Set<string>>;
  /**
   * Adds the group to the `add` devices and takes it from the `remove` ones (adds first, so an id
   * in both ends outside); answers how many memberships each side really created or ended. The
   * ids must be devices of the project.
   */
  changeMemberships(projectId: string, groupId: string, add: readonly string[], remove: readonly string[]): Promise<{ added: number; removed: number }>;
  /** Adds or removes one group id on the device; null when the device does not exist. */
  setMembership(projectId: string, deviceUuid: string, groupId: string, member: boolean): Promise<Device | null>;

  /** Devices by device_id; with a page, that page and the count of every match. */
  /** Every match, ordered by device_id. */
  listDevices(projectId: string, filter: DeviceFilter): Promise<Device[]>;
  /** One page of the matches, in the order of the devices' UUIDs; its cost follows the page, not the project (adapters/mongo/device-buckets.ts). */
  readDevicePage(projectId: string, filter: Omit<DeviceFilter, 'ids'>, page: DevicePage): Promise<DevicePageRead>;
  /** Devices per reported chip family (empty: not reported); estimated in a large project. */
  countChipFamilies(projectId: string): Promise<{ counts: CountsById; estimated: boolean }>;
  /** Devices per reported current_hash (empty: not reported); estimated in a large project. */
  countCurrentHashes(projectId: string): Promise<{ counts: CountsById; estimated: boolean }>;
  /**
   * Every device of the project (or those whose UUID begins with `idPrefix`) as a check decides on
   * it, `pageSize` at a time, with its memberships of `groups`.
   */
  streamFleet(projectId: string, pageSize: number, idPrefix: string, groups: FleetGroups): AsyncIterable<FleetDevice[]>;
  /**
   * Devices of the project; with targets, those a deployment with these targets reaches (docs/api.md, "Targeting").
   * With `atMost`, counting stops there, reading no more devices than that.
   */
  countDevices(projectId: string, targets?: DeviceTargets, atMost?: number): Promise<DeviceCount>;
  /** Deletes the device and gives its owner back a place under the cap; false when missing. */
  deleteDevice(projectId: string, id: string, ownerId: string): Promise<boolean>;
  findDevice(projectId: string, key: { id: string } | { deviceId: string }): Promise<Device | null>;
  /**
   * Registers a device unless its owner already has `maxDevices` (0: no cap). Atomic: concurrent
   * registrations never exceed the cap, and the same device_id is registered once. A device's own
   * first check may be refused from the store's memory of an owner found at its cap a moment ago
   * (the device checks again later); a person's pre-provisioning is decided on the places held.
   */
  registerDevice(device: Device, ownerId: string, maxDevices: number, by?: Registration): Promise<{ device: Device; created: boolean } | 'over_limit'>;
  /**
   * A check's first write, in one find-and-modify of the device (CheckIn): the device as it was
   * before it, without its groups (`groupIds` empty: groupIdsOf reads them, for the checks that
   * need them); null when there is no such device.
   */
  checkIn(checkIn: CheckIn): Promise<Device | null>;
  /** The device's groups, as its memberships say: one read by the device's key. */
  groupIdsOf(deviceUuid: string): Promise<string[]>;
  /**
   * Writes a check's decision record, one insert, and last_check_status when it changed; before
   * the check is answered.
   */
  recordCheck(record: DecisionRecordWrite): Promise<void>;
  /** PREVIOUS RELEASE: a whole check in one device update and the record's insert (the release before's RecordCheck). */
  recordWholeCheck(record: WholeCheckWrite): Promise<void>;
  /** Deletes the device's decision records numbered `throughSeq` and below. */
  trimDecisionRecords(id: string, throughSeq: number): Promise<void>;
  /** The device's decision history, newest first. */
  listDecisionRecords(projectId: string, id: string): Promise<DecisionRecord[]>;
  updateDevice(projectId: string, id: string, set: Partial<Device>): Promise<Device | null>;
  /**
   * Writes a status report's change of device `id` in one conditional update, reading nothing
   * (StatusReportWrite); false when nothing was written.
   */
  applyStatusReport(id: string, write: StatusReportWrite): Promise<boolean>;
  /** Keeps the offer device `id` put off, and until when, in place of any before. */
  deferOffer(id: string, deferral: Deferral): Promise<void>;
  /** PREVIOUS RELEASE: sets what a status report says of the device, without reading it (ApplyDeviceReport); false when no such device. */
  applyDeviceReport(projectId: string, id: string, set: Partial<Device>): Promise<boolean>;
}

/** A deployment's targets: any listed group and any listed channel; an empty list is no filter. */
export interface DeviceTargets {
  groupIds: string[];
  channelIds: string[];
}
