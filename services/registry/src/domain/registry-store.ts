import type { Channel, Device, Project, ReportedProfile } from './model';

/** The registry's storage port; `adapters/mongo` implements it. */
export interface RegistryStore {
  insertProject(project: Project): Promise<'inserted' | 'slug_taken'>;
  findProject(projectId: string): Promise<Project | null>;
  listProjects(ownerId: string): Promise<Project[]>;

  insertChannel(channel: Channel): Promise<'inserted' | 'name_taken'>;
  listChannels(projectId: string): Promise<Channel[]>;
  findDefaultChannel(projectId: string): Promise<Channel | null>;

  listDevices(projectId: string): Promise<Device[]>;
  findDevice(projectId: string, key: { id: string } | { deviceId: string }): Promise<Device | null>;
  /** Records a heartbeat on an active device and returns it; null when missing or inactive. */
  recordHeartbeat(projectId: string, deviceId: string, reported: ReportedProfile, at: Date): Promise<Device | null>;
  /**
   * Registers a device unless its owner already has `maxDevices` (0: no cap). Atomic: concurrent
   * registrations never exceed the cap, and the same device_id is registered once.
   */
  registerDevice(device: Device, ownerId: string, maxDevices: number): Promise<{ device: Device; created: boolean } | 'over_limit'>;
  /** Sets last_check_at/status unless a newer outcome is already stored (events may come late). */
  recordCheckOutcome(projectId: string, id: string, status: string, at: Date): Promise<void>;
  updateDevice(projectId: string, id: string, set: Partial<Device>): Promise<Device | null>;
}
