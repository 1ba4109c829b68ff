import { MongoClient } from 'mongodb';
import type { RunningStack } from '@ota/devstack';

// A deployment whose devices have all reported, written straight into the databases in the form
// their stores keep: the devices on the default channel in registry's (models.ts there), their
// status events and counts in rollout's (mongo-device-state-store.ts and mongo-status-counts.ts).
// Registering and reporting 100,000 devices through the API would take the better part of an hour
// on this machine, and what s11 measures is reading that state.

/** The lifecycle with rollout's ranks (services/rollout/src/domain/device-status.ts). */
const LIFECYCLE = [
  ['offered', 1],
  ['download_started', 2],
  ['downloaded', 3],
  ['flashed', 4],
  ['validated', 5],
  ['reboot', 6],
  ['confirmed', 9],
] as const;
const FAILED_RANK = 7;
const FAILURE_REASON = 'flash_write_failed';

export interface SeededCounts {
  devices: number;
  events: number;
  byStatus: Record<string, number>;
  failures: number;
}

/**
 * Writes each of `devices` devices' status events for the deployment: device i walks the first
 * 1 + (i mod 7) steps of the lifecycle, and every twentieth device fails after flashing. Also
 * writes the counts those reports would have left (a snapshot, which releases before kept counts
 * ignore), and answers them, for checking the summary against.
 */
export async function seedDeploymentEvents(
  stack: RunningStack,
  target: { projectId: string; channelId: string },
  deploymentId: string,
  devices: number,
  log: (message: string) => void,
): Promise<SeededCounts> {
  const { projectId } = target;
  const client = await MongoClient.connect(stack.mongodbUri);
  try {
    const database = (service: string) => client.db(String(stack.gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, service));
    const db = database('rollout');
    const events = db.collection<Record<string, unknown>>('device_events');
    const registered = database('registry').collection<Record<string, unknown>>('devices');
    const at = new Date(Date.now() - 60_000);
    const seeded: SeededCounts = { devices, events: 0, byStatus: {}, failures: 0 };
    let batch: Record<string, unknown>[] = [];
    let deviceBatch: Record<string, unknown>[] = [];
    const flush = async () => {
      if (batch.length > 0) await events.insertMany(batch, { ordered: false });
      if (deviceBatch.length > 0) await registered.insertMany(deviceBatch, { ordered: false });
      seeded.events += batch.length;
      batch = [];
      deviceBatch = [];
    };
    const event = (deviceId: string, kind: 'status' | 'failure', status: string, rank: number, reason: string, suffix = '') => ({
      _id: `${deploymentId}:${deviceId}:${status}${suffix}`,
      kind,
      deployment_id: deploymentId,
      project_id: projectId,
      device_id: deviceId,
      status,
      rank,
      bit: kind === 'status' ? 2 ** rank : 0,
      reason,
      at,
    });
    for (let device = 0; device < devices; device++) {
      // Unique per deployment: a run seeds several deployments into one registry.
      const deviceId = `${deploymentId.slice(0, 24)}${device.toString(16).padStart(12, '0')}`;
      deviceBatch.push({
        _id: deviceId,
        project_id: projectId,
        device_id: `seeded-${device}`,
        framework: 'esp_idf',
        chip_family: 'esp32',
        board_id: '',
        hardware_revision: '',
        partition_profile: '',
        nvs_schema_version: null,
        security_mode: '',
        current_build_number: 0,
        current_version_label: '1.0.0',
        current_hash: '',
        last_ota_status: '',
        last_ota_reason: '',
        active: true,
        last_seen: at,
        last_check_at: at,
        last_check_status: 'offered',
        channel_id: target.channelId,
        metadata: {},
        created_at: at,
        place: device,
        token_required: false,
        check_count: 1,
      });
      const steps = LIFECYCLE.slice(0, 1 + (device % LIFECYCLE.length));
      for (const [status, rank] of steps) batch.push(event(deviceId, 'status', status, rank, ''));
      let highest: string = steps.at(-1)![0];
      if (device % 20 === 0 && steps.length >= 4 && highest !== 'confirmed') {
        batch.push(event(deviceId, 'status', 'failed', FAILED_RANK, FAILURE_REASON), event(deviceId, 'failure', 'failed', FAILED_RANK, FAILURE_REASON, ':1'));
        highest = 'failed';
        seeded.failures += 1;
      }
      seeded.byStatus[highest] = (seeded.byStatus[highest] ?? 0) + 1;
      if (batch.length >= 2_000) await flush();
      if (device > 0 && device % 20_000 === 0) log(`  seeded ${device}/${devices} devices`);
    }
    await flush();
    await db.collection<{ _id: string } & Record<string, unknown>>('status_count_snapshots').replaceOne(
      { _id: `${deploymentId}:1` },
      {
        deployment_id: deploymentId,
        version: 1,
        through: new Date(Math.floor(Date.now() / 1000) * 1000),
        by_status: seeded.byStatus,
        failures_by_reason: seeded.failures > 0 ? [{ reason: FAILURE_REASON, count: seeded.failures }] : [],
        recounted_at: new Date(),
      },
      { upsert: true },
    );
    return seeded;
  } finally {
    await client.close();
  }
}
