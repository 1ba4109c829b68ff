import { randomUUID } from 'node:crypto';
import { devicePageKeys, readDevicePage } from '@ota/ids';
import { addPageKeysOnce, collectionOf, findAll, insertUnique, updateEachById } from '@ota/mongo';
import type { DeviceStatusEntry } from '../../domain/device-status-cache';
import { ROLLOUT_STATUSES, bitOf, rankOf, statusOfBits } from '../../domain/device-status';
import type { DeviceEvent, DeviceStateRecord, DeviceStateStore, StatesPageRead, StoredStatesPage } from '../../domain/ports';
import type { CountedStep } from '../../domain/status-counts';
import { downloadOf, type DownloadCounts } from '../../domain/downloads';
import type { DeviceEventDoc, RolloutModels } from './models';

/** The device events a deployment's failure counter counts: every failure report, and one rolled_back per device. */
const FAILURES = { $or: [{ kind: 'failure' }, { kind: 'status', status: 'rolled_back' }] };

/**
 * Per-device states a page of a deployment's states may read before it answers with what it found
 * and where the next page starts (a status that few devices are at, in a large deployment).
 */
const STATES_PAGE_READ_BUDGET = 1_000;

/**
 * Each device's statuses per deployment (collection `device_events`): insert-only, each status
 * once per device and deployment (every `failed` kept), so that counts come from `$group`/`$sum`.
 */
export class MongoDeviceStateStore implements DeviceStateStore {
  constructor(private readonly models: RolloutModels) {}

  async listStates(deploymentId: string): Promise<DeviceStateRecord[]> {
    const docs = await this.models.DeviceEvent.find({ deployment_id: deploymentId, kind: 'status' }).lean<DeviceEventDoc[]>();
    return latestPerDevice(docs)
      .sort((a, b) => b.at.getTime() - a.at.getTime() || a.device_id.localeCompare(b.device_id))
      .map(stateOf);
  }

  /**
   * A page of the deployment's per-device states in the order of the devices' UUIDs, read one page
   * bucket of the deployment at a time by equality (readDevicePage in @ota/ids), so that its cost
   * follows the page and not the deployment. `now` turns a stored state into the one shown (a silent
   * device as failed), before the status filter.
   *
   * Every device offered has an `offered` document, and in a deployment under way most have moved
   * on: a page at a status above `offered` leaves those documents to the store (`$ne`, the one
   * inequality FerretDB v1 hands PostgreSQL), about half of what it would read.
   */
  async readStatesPage(deploymentId: string, page: StoredStatesPage, now: (state: DeviceStateRecord) => DeviceStateRecord): Promise<StatesPageRead> {
    const beyondOffered = page.lowestStored !== undefined && rankOf(page.lowestStored) > rankOf('offered') ? { status: { $ne: 'offered' } } : {};
    const read = await readDevicePage({
      scope: deploymentId,
      find: async (pageKey) => {
        const filter = { ...(pageKey ? { page_keys: pageKey } : { deployment_id: deploymentId }), kind: 'status', ...beyondOffered };
        const docs = await findAll<DeviceEventDoc>(this.models.DeviceEvent, filter, { projection: { device_id: 1, status: 1, rank: 1, reason: 1, at: 1 } });
        return latestPerDevice(docs).map((doc) => ({ _id: doc.device_id, state: now(stateOf(doc)) }));
      },
      keep: page.status ? (doc) => doc.state.status === page.status : undefined,
      limit: page.limit,
      afterId: page.afterId,
      readBudget: STATES_PAGE_READ_BUDGET,
    });
    return { states: read.docs.map((doc) => doc.state), total: read.total, nextAfterId: read.nextAfterId, read: read.read };
  }

  /**
   * Gives the status documents stored before states were paged their page keys; done once, then
   * recorded in `data_migrations` (finding them reads every status document). Writes in batches.
   */
  async addStatusPageKeys(): Promise<void> {
    await addPageKeysOnce<{ _id: string; deployment_id: string; device_id: string }>({
      done: this.models.DataMigration,
      name: 'status_page_keys',
      // The migration reads and writes only the fields it names.
      collection: this.models.DeviceEvent.collection as never,
      missing: { kind: 'status', page_keys: { $exists: false } },
      fields: { deployment_id: 1, device_id: 1 },
      keysOf: (doc) => devicePageKeys(doc.deployment_id, doc.device_id),
    });
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
      await collectionOf(this.models.DeviceEvent).updateMany({ kind: 'status', status, bit: { $exists: false } }, { $set: { bit: bitOf(status) } });
    }
  }

  /**
   * First `downloaded` reports stored before their documents said how the image came get it, once
   * (run by migrate.js and at start, so that `downloadsOf` counts every device; finding them reads
   * every status document, so a later start does not look again).
   */
  async backfillDownloads(): Promise<void> {
    const name = 'status_downloads';
    if (await this.models.DataMigration.exists({ _id: name })) return;
    const events = collectionOf(this.models.DeviceEvent);
    let batch: Array<{ _id: string; update: Record<string, unknown> }> = [];
    const write = async () => {
      if (batch.length === 0) return;
      await updateEachById(events, batch as never);
      batch = [];
    };
    for await (const doc of events.find({ kind: 'status', event: 'downloaded', download: { $exists: false } }, { projection: { detail_json: 1 } })) {
      batch.push({ _id: doc._id, update: { $set: downloadFields('downloaded', doc.detail_json ?? '') } });
      if (batch.length === 1_000) await write();
    }
    await write();
    await this.models.DataMigration.updateOne({ _id: name }, { $set: { at: new Date() } }, { upsert: true }).exec();
  }

  async downloadsOf(deploymentIds: readonly string[]): Promise<DownloadCounts> {
    const counts: DownloadCounts = { patched: 0, whole: 0, fellBack: 0, patchBytes: 0 };
    // One deployment at a time, by equality: FerretDB v1 hands equalities to PostgreSQL (and its
    // index on deployment and download), not an $in, which it reads the collection through.
    for (const deploymentId of new Set(deploymentIds)) {
      const countOf = (download: string) => this.models.DeviceEvent.countDocuments({ deployment_id: deploymentId, download }).exec();
      const [patched, whole, fellBack, [bytes]] = await Promise.all([
        countOf('patch'),
        countOf('image'),
        countOf('fell_back'),
        // Summed over one group: FerretDB v1 answers 0 for a field summed per group.
        this.models.DeviceEvent.aggregate<{ _id: null; patch_bytes: number }>([{ $match: { deployment_id: deploymentId, download: 'patch' } }, { $group: { _id: null, patch_bytes: { $sum: '$patch_bytes' } } }]),
      ]);
      counts.patched += patched;
      counts.whole += whole;
      counts.fellBack += fellBack;
      counts.patchBytes += bytes?.patch_bytes ?? 0;
    }
    return counts;
  }

  async deleteDeviceStates(projectId: string, deviceUuid: string): Promise<string[]> {
    const deploymentIds: string[] = await this.models.DeviceEvent.distinct('deployment_id', { project_id: projectId, device_id: deviceUuid });
    await this.models.DeviceEvent.deleteMany({ project_id: projectId, device_id: deviceUuid });
    await this.models.DeviceReport.deleteMany({ project_id: projectId, device_id: deviceUuid });
    return deploymentIds;
  }

  async recordEvent(event: DeviceEvent): Promise<{ newlyStored: boolean; reportStored: boolean }> {
    const key = `${event.deploymentId}:${event.deviceUuid}`;
    const report = event.report;
    const doc = (kind: DeviceEventDoc['kind'], _id: string, carriesReport: boolean): DeviceEventDoc => ({
      _id,
      kind,
      deployment_id: event.deploymentId,
      project_id: event.projectId,
      device_id: event.deviceUuid,
      status: event.status,
      rank: event.rank,
      bit: kind === 'status' ? bitOf(event.status) : 0,
      reason: event.reason,
      at: event.at,
      ...(kind === 'status' ? { page_keys: devicePageKeys(event.deploymentId, event.deviceUuid) } : {}),
      ...(carriesReport && report
        ? { report_id: report.id, event: report.event, build_number: report.buildNumber ?? null, detail_json: report.detailJson, ...downloadFields(report.event, report.detailJson) }
        : {}),
    });
    if (event.status === 'failed') {
      // Every failure is inserted, so the failure document carries the report.
      await collectionOf(this.models.DeviceEvent).insertOne(doc('failure', `${key}:failed:${randomUUID()}`, true));
      return { newlyStored: await insertUnique(collectionOf(this.models.DeviceEvent), doc('status', `${key}:failed`, false)), reportStored: report !== undefined };
    }
    // Not inserted: the device already reached this status (a repeated or resent event, stored once).
    const newlyStored = await insertUnique(collectionOf(this.models.DeviceEvent), doc('status', `${key}:${event.status}`, true));
    return { newlyStored, reportStored: newlyStored && report !== undefined };
  }

  async highestStatus(deploymentId: string, deviceUuid: string): Promise<DeviceStatusEntry | null> {
    const docs = await this.models.DeviceEvent.find({ deployment_id: deploymentId, device_id: deviceUuid, kind: { $in: ['status', 'count'] } }, { kind: 1, status: 1, rank: 1 }).lean<
      DeviceEventDoc[]
    >();
    const statuses = docs.filter((doc) => doc.kind === 'status');
    if (statuses.length === 0) return null;
    const highest = statuses.reduce((best, doc) => (doc.rank > best.rank ? doc : best));
    return {
      status: highest.status,
      rank: highest.rank,
      rolledBack: statuses.some((doc) => doc.status === 'rolled_back'),
      counted: endOfSteps(docs.filter((doc) => doc.kind === 'count')),
    };
  }

  claimCountedStep(step: CountedStep): Promise<boolean> {
    const doc: DeviceEventDoc = {
      _id: `${step.deploymentId}:${step.deviceUuid}:from:${step.from}`,
      kind: 'count',
      deployment_id: step.deploymentId,
      project_id: step.projectId,
      device_id: step.deviceUuid,
      status: step.to,
      from: step.from,
      rank: rankOf(step.to),
      bit: bitOf(step.to) - bitOf(step.from),
      reason: '',
      at: step.at,
    };
    return insertUnique(collectionOf(this.models.DeviceEvent), doc);
  }

  async countedStatus(deploymentId: string, deviceUuid: string): Promise<string> {
    const steps = await this.models.DeviceEvent.find({ deployment_id: deploymentId, device_id: deviceUuid, kind: 'count' }, { status: 1, rank: 1 }).lean<DeviceEventDoc[]>();
    return endOfSteps(steps);
  }

  async countedByStatus(deploymentId: string, before?: Date): Promise<Map<string, number>> {
    // Each step adds its device to `status` and takes it from `from`: per status, the steps into
    // it less the steps out of it are the devices counted there. Two `$group`/`$sum`s, however
    // many devices there are.
    const match = { $match: { deployment_id: deploymentId, kind: 'count', ...(before ? { at: { $lt: before } } : {}) } };
    const [into, outOf] = await Promise.all([
      this.models.DeviceEvent.aggregate<{ _id: string; steps: number }>([match, { $group: { _id: '$status', steps: { $sum: 1 } } }]),
      this.models.DeviceEvent.aggregate<{ _id: string; steps: number }>([match, { $group: { _id: '$from', steps: { $sum: 1 } } }]),
    ]);
    const counts = new Map<string, number>();
    for (const row of into) counts.set(row._id, (counts.get(row._id) ?? 0) + row.steps);
    for (const row of outOf) if (row._id !== 'pending') counts.set(row._id, (counts.get(row._id) ?? 0) - row.steps);
    for (const [status, devices] of counts) if (devices === 0) counts.delete(status);
    return counts;
  }

  async claimMissingSteps(deploymentId: string): Promise<number> {
    // Per device, the bits of the statuses it reached (the highest bit is its highest status) and
    // the sum of its steps' bits (bitOf(counted) - 1).
    const perDevice = (kind: DeviceEventDoc['kind']) =>
      this.models.DeviceEvent.aggregate<{ _id: string; bits: number }>([{ $match: { deployment_id: deploymentId, kind } }, { $group: { _id: '$device_id', bits: { $sum: '$bit' } } }]);
    const [reached, steps] = await Promise.all([perDevice('status'), perDevice('count')]);
    const countedBits = new Map(steps.map((row) => [row._id, row.bits]));
    const projectId = reached.length > 0 ? (await this.models.DeviceEvent.findOne({ deployment_id: deploymentId }, { project_id: 1 }).lean<DeviceEventDoc>())?.project_id : undefined;
    let moved = 0;
    for (const row of reached) {
      const highest = statusOfBits(row.bits);
      const counted = statusOfBits((countedBits.get(row._id) ?? 0) + bitOf('pending')) ?? 'pending';
      if (!highest || !projectId || rankOf(highest) <= rankOf(counted)) continue;
      // Dated at the epoch: the recount that follows counts it, and no delta ever did.
      const step: CountedStep = { deploymentId, projectId, deviceUuid: row._id, from: counted, to: highest, at: new Date(0) };
      if (await this.claimCountedStep(step)) moved += 1;
    }
    return moved;
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

/** The end of a device's steps: the highest they reached (they rise one after another), `pending` with none. */
function endOfSteps(steps: readonly Pick<DeviceEventDoc, 'status' | 'rank'>[]): string {
  return steps.reduce<Pick<DeviceEventDoc, 'status' | 'rank'> | null>((best, step) => (!best || step.rank > best.rank ? step : best), null)?.status ?? 'pending';
}

/** Each device's highest-ranked status document: its state. */
function latestPerDevice(docs: DeviceEventDoc[]): DeviceEventDoc[] {
  const latest = new Map<string, DeviceEventDoc>();
  for (const doc of docs) {
    const current = latest.get(doc.device_id);
    if (!current || doc.rank > current.rank) latest.set(doc.device_id, doc);
  }
  return [...latest.values()];
}

function stateOf(doc: DeviceEventDoc): DeviceStateRecord {
  return { deviceUuid: doc.device_id, status: doc.status, reason: doc.reason ?? '', updatedAt: doc.at };
}

/** What a status document of a first `downloaded` report keeps of how the image came; nothing for other events. */
function downloadFields(event: string, detailJson: string): Pick<DeviceEventDoc, 'download' | 'patch_bytes'> {
  if (event !== 'downloaded') return {};
  const download = downloadOf(detailJson);
  return download.how === 'patch' ? { download: download.how, patch_bytes: download.patchBytes } : { download: download.how };
}
