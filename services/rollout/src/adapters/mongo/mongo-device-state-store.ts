import { randomUUID } from 'node:crypto';
import { insertUnique } from '@ota/mongo';
import type { DeviceStatusEntry } from '../../domain/device-status-cache';
import { ROLLOUT_STATUSES, bitOf, statusOfBits } from '../../domain/device-status';
import type { DeviceEvent, DeviceStateRecord, DeviceStateStore } from '../../domain/ports';
import type { DeviceEventDoc, RolloutModels } from './models';

/** The device events a deployment's failure counter counts: every failure report, and one rolled_back per device. */
const FAILURES = { $or: [{ kind: 'failure' }, { kind: 'status', status: 'rolled_back' }] };

/**
 * Each device's statuses per deployment (collection `device_events`): insert-only, each status
 * once per device and deployment (every `failed` kept), so that counts come from `$group`/`$sum`.
 */
export class MongoDeviceStateStore implements DeviceStateStore {
  constructor(private readonly models: RolloutModels) {}

  async listStates(deploymentId: string): Promise<DeviceStateRecord[]> {
    const docs = await this.models.DeviceEvent.find({ deployment_id: deploymentId, kind: 'status' }).lean<DeviceEventDoc[]>();
    const latest = new Map<string, DeviceEventDoc>();
    for (const doc of docs) {
      const current = latest.get(doc.device_id);
      if (!current || doc.rank > current.rank) latest.set(doc.device_id, doc);
    }
    return [...latest.values()]
      .sort((a, b) => b.at.getTime() - a.at.getTime() || a.device_id.localeCompare(b.device_id))
      .map((doc) => ({ deviceId: doc.device_id, status: doc.status, reason: doc.reason ?? '', updatedAt: doc.at }));
  }

  async devicesByStatus(deploymentId: string, window: { since?: Date; before?: Date } = {}): Promise<Map<string, number>> {
    // Per device, the sum of the bits of the statuses it reached; then devices per sum. The second
    // stage leaves one row per combination of statuses seen, however many devices there are.
    const at = { ...(window.since ? { $gte: window.since } : {}), ...(window.before ? { $lt: window.before } : {}) };
    const rows = await this.models.DeviceEvent.aggregate<{ _id: number; devices: number }>([
      { $match: { deployment_id: deploymentId, kind: 'status', ...(Object.keys(at).length > 0 ? { at } : {}) } },
      { $group: { _id: '$device_id', bits: { $sum: '$bit' } } },
      { $group: { _id: '$bits', devices: { $sum: 1 } } },
    ]);
    const counts = new Map<string, number>();
    for (const row of rows) {
      const status = statusOfBits(row._id);
      if (status) counts.set(status, (counts.get(status) ?? 0) + row.devices);
    }
    return counts;
  }

  countRecentFailures(deploymentId: string, reason: string, since: Date): Promise<number> {
    return this.models.DeviceEvent.countDocuments({ deployment_id: deploymentId, ...FAILURES, reason, at: { $gte: since } }).exec();
  }

  async failuresByReason(deploymentId: string, before?: Date): Promise<Map<string, number>> {
    const rows = await this.models.DeviceEvent.aggregate<{ _id: string | null; failures: number }>([
      { $match: { deployment_id: deploymentId, ...FAILURES, ...(before ? { at: { $lt: before } } : {}) } },
      { $group: { _id: '$reason', failures: { $sum: 1 } } },
    ]);
    return new Map(rows.map((row) => [row._id ?? '', row.failures]));
  }

  /**
   * Status documents stored before they carried their bit get it (idempotent; run by migrate.js
   * and at start, so that `devicesByStatus` counts every device).
   */
  async backfillStatusBits(): Promise<void> {
    for (const status of ROLLOUT_STATUSES) {
      await this.models.DeviceEvent.collection.updateMany({ kind: 'status', status, bit: { $exists: false } } as never, { $set: { bit: bitOf(status) } });
    }
  }

  async deleteDeviceStates(projectId: string, deviceId: string): Promise<string[]> {
    const deploymentIds: string[] = await this.models.DeviceEvent.distinct('deployment_id', { project_id: projectId, device_id: deviceId });
    await this.models.DeviceEvent.deleteMany({ project_id: projectId, device_id: deviceId });
    await this.models.DeviceReport.deleteMany({ project_id: projectId, device_id: deviceId });
    return deploymentIds;
  }

  async recordEvent(event: DeviceEvent): Promise<{ newlyStored: boolean; reportStored: boolean }> {
    const key = `${event.deploymentId}:${event.deviceId}`;
    const report = event.report;
    const doc = (kind: DeviceEventDoc['kind'], _id: string, carriesReport: boolean): DeviceEventDoc => ({
      _id,
      kind,
      deployment_id: event.deploymentId,
      project_id: event.projectId,
      device_id: event.deviceId,
      status: event.status,
      rank: event.rank,
      bit: kind === 'status' ? bitOf(event.status) : 0,
      reason: event.reason,
      at: event.at,
      ...(carriesReport && report
        ? { report_id: report.id, event: report.event, build_number: report.buildNumber ?? null, detail_json: report.detailJson }
        : {}),
    });
    if (event.status === 'failed') {
      // Every failure is inserted, so the failure document carries the report.
      await this.models.DeviceEvent.collection.insertOne(doc('failure', `${key}:failed:${randomUUID()}`, true) as never);
      return { newlyStored: await insertUnique(this.models.DeviceEvent.collection, doc('status', `${key}:failed`, false)), reportStored: report !== undefined };
    }
    // Not inserted: the device already reached this status (a repeated or resent event, stored once).
    const newlyStored = await insertUnique(this.models.DeviceEvent.collection, doc('status', `${key}:${event.status}`, true));
    return { newlyStored, reportStored: newlyStored && report !== undefined };
  }

  async highestStatus(deploymentId: string, deviceId: string): Promise<DeviceStatusEntry | null> {
    const docs = await this.models.DeviceEvent.find({ deployment_id: deploymentId, device_id: deviceId, kind: 'status' }, { status: 1, rank: 1 }).lean<
      DeviceEventDoc[]
    >();
    if (docs.length === 0) return null;
    const highest = docs.reduce((best, doc) => (doc.rank > best.rank ? doc : best));
    return { status: highest.status, rank: highest.rank, rolledBack: docs.some((doc) => doc.status === 'rolled_back') };
  }

  async rolledBackDevices(deploymentIds: readonly string[]): Promise<Map<string, Set<string>>> {
    const docs = await this.models.DeviceEvent.find(
      { deployment_id: { $in: [...deploymentIds] }, kind: 'status', status: 'rolled_back' },
      { deployment_id: 1, device_id: 1 },
    ).lean<Pick<DeviceEventDoc, 'deployment_id' | 'device_id'>[]>();
    const deploymentsByDevice = new Map<string, Set<string>>();
    for (const doc of docs) deploymentsByDevice.set(doc.device_id, (deploymentsByDevice.get(doc.device_id) ?? new Set()).add(doc.deployment_id));
    return deploymentsByDevice;
  }
}
