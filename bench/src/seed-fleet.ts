import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import type { RunningStack } from '@ota/devstack';
import { devicePageKeys, deviceUuid } from '@ota/ids';
import { rankOf } from '@ota/vocabulary';
import { profileDocOf } from '@ota/registry/dist/adapters/mongo/device-profiles';
import type { DeviceProfileDoc } from '@ota/registry/dist/adapters/mongo/models';
import { packDocsOf } from '@ota/registry/dist/adapters/mongo/profile-packs';

// A project's fleet written straight into registry's store, in the form its store keeps
// (services/registry/src/adapters/mongo/models.ts): devices spread over chip families, builds,
// channels and groups, with their memberships. Registering a million devices through the API
// would take most of a day on this machine; what s16 measures is what a team does around a
// fleet that size.

export const SEEDED_CHIP_FAMILIES = ['esp32', 'esp32c3', 'esp32s3'] as const;
/** Builds the fleet runs: device i runs build 1 + (i mod 5). */
export const SEEDED_BUILDS = 5;

export interface FleetLayout {
  projectId: string;
  /** The project's channels: device i is on channelIds[i mod length]. */
  channelIds: string[];
  /** The project's groups: device i is a member of groupIds[i mod length]. */
  groupIds: string[];
}

export interface SeededFleet {
  devices: number;
  seconds: number;
  /** The store's size on disk (FerretDB's PostgreSQL database) before and after, where the stack runs PostgreSQL. */
  storeBytesBefore?: number;
  storeBytesAfter?: number;
  /** device_id of device i, for reading devices back by what a team types. */
  deviceIdOf: (index: number) => string;
  /** The id (a UUID) the API knows device i by. */
  idOf: (index: number) => string;
}

export const seededDeviceId = (index: number) => `unit-${index.toString().padStart(7, '0')}`;

/** The size of the stack's PostgreSQL database, where FerretDB keeps every collection. */
export function storeBytes(postgresUrl: string): number | undefined {
  if (!postgresUrl) return undefined;
  const result = spawnSync('psql', [postgresUrl, '-Atc', 'SELECT pg_database_size(current_database())'], { encoding: 'utf8' });
  const value = Number(result.stdout.trim());
  return result.status === 0 && Number.isFinite(value) ? value : undefined;
}

/**
 * Vacuums, analyzes and checkpoints the stack's PostgreSQL database after a bulk load, as
 * autovacuum and the checkpointer would over the following minutes: a store that grew to this
 * size over months has long since settled, and its catch-up would otherwise run under the first
 * measurements (it showed as 30 ms of PostgreSQL CPU per primary-key read). Answers how long it took, in seconds; undefined where
 * the stack runs no PostgreSQL of its own.
 */
export async function settleStore(postgresUrl: string): Promise<number | undefined> {
  if (!postgresUrl) return undefined;
  const started = performance.now();
  // Not spawnSync: the bench's keep-alive connections to the gateway must be read meanwhile.
  await promisify(execFile)('psql', [postgresUrl, '-Atqc', 'VACUUM (ANALYZE)'], { maxBuffer: 1 << 20 });
  // Then the load's dirty pages to disk, as the checkpointer would within checkpoint_timeout: a
  // million devices written in five minutes left checkpoints following each other every 5 to 10 s
  // (max_wal_size), which went on into the reads measured next.
  await promisify(execFile)('psql', [postgresUrl, '-Atqc', 'CHECKPOINT'], { maxBuffer: 1 << 20 });
  return Math.round((performance.now() - started) / 100) / 10;
}

/** What PostgreSQL has written since it started: WAL, checkpoints, and pages written by each writer. */
export interface StoreWrites {
  walMiB: number;
  checkpoints: number;
  /** Pages written by the checkpointer, the background writer, and backends making room for a read. */
  pagesByCheckpoints: number;
  pagesByBackgroundWriter: number;
  pagesByBackends: number;
}

/** StoreWrites now; undefined where the stack runs no PostgreSQL of its own. */
export async function storeWrites(postgresUrl: string): Promise<StoreWrites | undefined> {
  if (!postgresUrl) return undefined;
  const query = 'SELECT (SELECT wal_bytes FROM pg_stat_wal), checkpoints_timed + checkpoints_req, buffers_checkpoint, buffers_clean, buffers_backend FROM pg_stat_bgwriter';
  const { stdout } = await promisify(execFile)('psql', [postgresUrl, '-Atqc', query], { maxBuffer: 1 << 20 });
  const [walBytes, checkpoints, byCheckpoints, byBackgroundWriter, byBackends] = stdout.trim().split('|').map(Number);
  return { walMiB: Math.round(walBytes! / 2 ** 20), checkpoints: checkpoints!, pagesByCheckpoints: byCheckpoints!, pagesByBackgroundWriter: byBackgroundWriter!, pagesByBackends: byBackends! };
}

/** What was written between two StoreWrites. */
export function writesBetween(before: StoreWrites | undefined, after: StoreWrites | undefined): StoreWrites | undefined {
  if (!before || !after) return undefined;
  return Object.fromEntries(Object.entries(after).map(([name, value]) => [name, value - before[name as keyof StoreWrites]])) as unknown as StoreWrites;
}

export async function seedFleet(stack: RunningStack, layout: FleetLayout, devices: number, log: (message: string) => void): Promise<SeededFleet> {
  // The UUID registry derives for the device, so that a check or a page finds it where registry would.
  const idOf = (index: number) => deviceUuid(layout.projectId, seededDeviceId(index));
  const client = await MongoClient.connect(stack.mongodbUri);
  const storeBytesBefore = storeBytes(stack.postgresUrl);
  const started = performance.now();
  try {
    const registry = client.db(String(stack.gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'registry'));
    const deviceDocs = registry.collection<Record<string, unknown>>('devices');
    const memberships = registry.collection<Record<string, unknown>>('memberships');
    const profiles = registry.collection<DeviceProfileDoc>('device_profiles');
    // Every profile, for the packs written after them.
    const allProfiles: DeviceProfileDoc[] = [];
    const at = new Date(Date.now() - 3_600_000);
    const BATCH = 2_000;
    for (let from = 0; from < devices; from += BATCH) {
      const batch: Record<string, unknown>[] = [];
      const members: Record<string, unknown>[] = [];
      const profileDocs: DeviceProfileDoc[] = [];
      for (let index = from; index < Math.min(devices, from + BATCH); index++) {
        const id = idOf(index);
        const groupId = layout.groupIds[index % layout.groupIds.length]!;
        const build = 1 + (index % SEEDED_BUILDS);
        const device = {
          _id: id,
          project_id: layout.projectId,
          device_id: seededDeviceId(index),
          framework: 'esp_idf',
          chip_family: SEEDED_CHIP_FAMILIES[index % SEEDED_CHIP_FAMILIES.length]!,
          board_id: '',
          hardware_revision: '',
          partition_profile: '',
          nvs_schema_version: null,
          security_mode: '',
          chip_revision: null,
          secure_version: null,
          current_build_number: build,
          current_version_label: `1.${build}.0`,
          current_hash: '',
          last_ota_status: '',
          last_ota_reason: '',
          active: index % 50 !== 0,
          last_seen: at,
          last_check_at: at,
          last_check_status: 'up_to_date',
          channel_id: layout.channelIds[index % layout.channelIds.length]!,
          metadata: {},
          created_at: at,
          // The copy of its groups the releases before kept on a device, which this one neither
          // reads nor writes: the fleet is one upgraded from them, and a run compared with such a
          // commit finds the groups on its side too.
          group_ids: [groupId],
          place: index,
          page_keys: devicePageKeys(layout.projectId, id),
          token_required: false,
          check_count: 1,
        };
        batch.push(device);
        // The device's profile as registry derives it from the document (a preview reads these).
        profileDocs.push(profileDocOf(device));
        members.push({ _id: `${groupId}:${id}`, project_id: layout.projectId, group_id: groupId, device_id: id, group_keys: devicePageKeys(groupId, id), page_keys: devicePageKeys(layout.projectId, id) });
      }
      await Promise.all([deviceDocs.insertMany(batch, { ordered: false }), memberships.insertMany(members, { ordered: false }), profiles.insertMany(profileDocs, { ordered: false })]);
      allProfiles.push(...profileDocs);
      if ((from / BATCH) % 50 === 49) log(`  seeded ${from + BATCH}/${devices} devices in ${Math.round((performance.now() - started) / 1000)} s`);
    }
    await writeProfilePacks(registry, layout.projectId, allProfiles);
    return {
      devices,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      storeBytesBefore,
      storeBytesAfter: storeBytes(stack.postgresUrl),
      deviceIdOf: seededDeviceId,
      idOf,
    };
  } finally {
    await client.close();
  }
}

/**
 * Device places 1 to `count` of `ownerId`, written into registry's store as registrations of
 * releases before this one left them (services/registry's device_places; no record of their cap).
 */
export async function seedDevicePlaces(stack: RunningStack, ownerId: string, count: number): Promise<void> {
  const client = await MongoClient.connect(stack.mongodbUri);
  try {
    const registry = client.db(String(stack.gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'registry'));
    const places = registry.collection<{ _id: string; scope: string; place: number }>('device_places');
    const BATCH = 5_000;
    for (let from = 1; from <= count; from += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, count - from + 1) }, (_, offset) => ({ _id: `${ownerId}#${from + offset}`, scope: ownerId, place: from + offset }));
      await places.insertMany(batch, { ordered: false });
    }
  } finally {
    await client.close();
  }
}

/**
 * The profile packs that the project's previews would have made by now, and the record that the
 * project has packs, as registry writes them (services/registry/src/adapters/mongo/profile-packs.ts):
 * the fleet as a team previews it after its first previews. None for a fleet too small for packs.
 * A commit from before packs has no such collections to read, and ignores them.
 */
async function writeProfilePacks(registry: ReturnType<MongoClient['db']>, projectId: string, profiles: readonly DeviceProfileDoc[]): Promise<void> {
  const packs = packDocsOf(profiles);
  if (packs.length === 0) return;
  await registry.collection<{ _id: string }>('device_profile_packed_projects').insertOne({ _id: projectId });
  const BATCH = 64;
  for (let from = 0; from < packs.length; from += BATCH) await registry.collection('device_profile_packs').insertMany(packs.slice(from, from + BATCH) as never[], { ordered: false });
}

/** Of every hundred seeded devices in a deployment: how many reached each status (the rest were offered only). */
const SEEDED_STATUS_SHARES: ReadonlyArray<[status: string, perHundred: number]> = [
  ['confirmed', 90],
  ['failed', 2],
  ['downloaded', 3],
];

/**
 * A deployment's worth of per-device statuses written straight into rollout's store, in the form
 * its store keeps them (services/rollout/src/adapters/mongo/models.ts): every device offered, and
 * by SEEDED_STATUS_SHARES most confirmed, some failed, some downloading. Only what the states page
 * reads: no counted steps, so the deployment's summary does not count them.
 */
export async function seedStatuses(stack: RunningStack, layout: { projectId: string; deploymentId: string }, idOf: (index: number) => string, devices: number, log: (message: string) => void): Promise<{ seconds: number; statusOf: (index: number) => string }> {
  const statusOf = (index: number) => {
    let slot = index % 100;
    for (const [status, perHundred] of SEEDED_STATUS_SHARES) {
      if (slot < perHundred) return status;
      slot -= perHundred;
    }
    return 'offered';
  };
  const client = await MongoClient.connect(stack.mongodbUri);
  const started = performance.now();
  try {
    const events = client.db(String(stack.gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'rollout')).collection<Record<string, unknown>>('device_events');
    const at = new Date(Date.now() - 1_800_000);
    const BATCH = 2_000;
    for (let from = 0; from < devices; from += BATCH) {
      const docs: Record<string, unknown>[] = [];
      for (let index = from; index < Math.min(devices, from + BATCH); index++) {
        const deviceId = idOf(index);
        const statuses = statusOf(index) === 'offered' ? ['offered'] : ['offered', statusOf(index)];
        for (const status of statuses) {
          docs.push({
            _id: `${layout.deploymentId}:${deviceId}:${status}`,
            kind: 'status',
            deployment_id: layout.deploymentId,
            project_id: layout.projectId,
            device_id: deviceId,
            status,
            rank: rankOf(status),
            bit: 2 ** rankOf(status),
            reason: status === 'failed' ? 'flash_write_failed' : '',
            at,
            page_keys: devicePageKeys(layout.deploymentId, deviceId),
          });
        }
      }
      await events.insertMany(docs, { ordered: false });
      if ((from / BATCH) % 50 === 49) log(`  seeded the statuses of ${from + BATCH}/${devices} devices in ${Math.round((performance.now() - started) / 1000)} s`);
    }
    return { seconds: Math.round((performance.now() - started) / 100) / 10, statusOf };
  } finally {
    await client.close();
  }
}
