import { createHash } from 'node:crypto';
import { assignBehaviours, assignChipRevisions, type Behaviour, type InjectedShares } from './fleet';
import type { FleetHealth } from './health';

export interface SimulationOptions {
  /** The gateway, e.g. http://127.0.0.1:8080. */
  url: string;
  /** A project token of `device` scope. */
  token: string;
  devices: number;
  /** Device ids are `${prefix}${index}`, zero-padded. */
  prefix: string;
  /** Requests in flight at once. */
  concurrency: number;
  shares: InjectedShares;
  /** Seeds which devices get which behaviour. */
  seed: string;
  framework: string;
  chipFamily: string;
  /** Each device's build before the run (the builds of a previous run carry over via `fleet`). */
  fleet?: Map<string, number>;
  /**
   * The devices that fail (fail, roll back, signature_invalid) run first, so that their failures
   * reach the deployment together, as a burst, before the rest of the fleet confirms.
   */
  burst?: boolean;
  /** How the devices run: with it, each check reports `health`, and a confirmed install starts the device's counts afresh. */
  health?: FleetHealth;
  /** The chip revisions the fleet's devices report (`chip_revision`), in equal shares; none: not reported. */
  chipRevisions?: readonly number[];
  /** The eFuse secure version every device reports (`secure_version`); none: not reported. */
  secureVersion?: number;
}

export interface SimulationSummary {
  devices: number;
  checks: number;
  /** Check answers by status. */
  statuses: Record<string, number>;
  offered: number;
  downloadedBytes: number;
  confirmed: number;
  /** Status reports of `failed` sent (every one counts against the deployment). */
  failedReports: number;
  rolledBack: number;
  /** Devices that went silent after `reboot` (never confirmed). */
  silent: number;
  checksumMismatches: number;
  /** Updates stopped because their offer no longer stood (a pause, a cancel): reported `stopped`, never a failure. */
  stopped: number;
  /** HTTP errors: answers other than 200, and network failures. */
  errors: number;
  /** The errors by HTTP status (`network` for failures to connect or read). */
  errorsByStatus: Record<string, number>;
  /** Each device's build after the run. */
  builds: Map<string, number>;
  behaviours: Map<string, Behaviour>;
  seconds: number;
}

export type Progress = (done: number, summary: SimulationSummary) => void;

const LIFECYCLE_BEFORE_APPLY = ['offered', 'download_started'] as const;
const LIFECYCLE_AFTER_DOWNLOAD = ['downloaded', 'flashed', 'validated', 'reboot'] as const;

/**
 * Runs every device once through check, download, checksum verification and status reports, with
 * the injected failures. Devices that are not offered only check.
 */
export async function simulate(options: SimulationOptions, onProgress?: Progress): Promise<SimulationSummary> {
  const startedAt = Date.now();
  const width = String(options.devices - 1).length;
  const deviceIds = Array.from({ length: options.devices }, (_, i) => `${options.prefix}${String(i).padStart(width, '0')}`);
  const behaviours = assignBehaviours(deviceIds, options.shares, options.seed);
  const chipRevisions = assignChipRevisions(deviceIds, options.chipRevisions ?? [], options.seed);
  const summary: SimulationSummary = {
    devices: options.devices,
    checks: 0,
    statuses: {},
    offered: 0,
    downloadedBytes: 0,
    confirmed: 0,
    failedReports: 0,
    rolledBack: 0,
    silent: 0,
    checksumMismatches: 0,
    stopped: 0,
    errors: 0,
    errorsByStatus: {},
    builds: new Map(deviceIds.map((id) => [id, options.fleet?.get(id) ?? 0])),
    behaviours,
    seconds: 0,
  };
  const headers = { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' };

  const countError = (status: string) => {
    summary.errors += 1;
    summary.errorsByStatus[status] = (summary.errorsByStatus[status] ?? 0) + 1;
  };

  async function post(path: string, body: unknown): Promise<Record<string, unknown> | undefined> {
    try {
      const response = await fetch(`${options.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const answer = (await response.json()) as Record<string, unknown>;
      if (response.status !== 200) {
        countError(String(response.status));
        return undefined;
      }
      return answer;
    } catch {
      countError('network');
      return undefined;
    }
  }

  async function runDevice(deviceId: string): Promise<void> {
    const current = summary.builds.get(deviceId)!;
    summary.checks += 1;
    const offer = await post('/api/v1/ota/check/', {
      device_id: deviceId,
      framework: options.framework,
      chip_family: options.chipFamily,
      current_build_number: current,
      version_label: `sim-${current}`,
      ...(chipRevisions.has(deviceId) ? { chip_revision: chipRevisions.get(deviceId) } : {}),
      ...(options.secureVersion !== undefined ? { secure_version: options.secureVersion } : {}),
      ...(options.health ? { health: options.health.reportOf(deviceId, current) } : {}),
    });
    if (!offer) return;
    const status = offer.update_available ? 'offered' : String(offer.status);
    summary.statuses[status] = (summary.statuses[status] ?? 0) + 1;
    if (!offer.update_available) return;
    summary.offered += 1;

    const deploymentId = String(offer.deployment_id);
    const report = (event: string, extra: Record<string, unknown> = {}) => post('/api/v1/ota/status/', { device_id: deviceId, deployment_id: deploymentId, event, ...extra });
    for (const event of LIFECYCLE_BEFORE_APPLY) await report(event);
    /**
     * As the C client: whether the offer still stands (docs/api.md, "Stopping devices mid-update").
     * A stop is reported and counted, never as a failure; no answer lets the update go on.
     */
    const standing = async (): Promise<boolean> => {
      const answer = await post('/api/v1/ota/offer/', { device_id: deviceId, deployment_id: deploymentId });
      if (answer?.standing !== false) return true;
      summary.stopped += 1;
      await report('stopped', { reason: answer.status });
      return false;
    };

    const download = await fetch(String(offer.url)).catch(() => undefined);
    // 409 or 410: the offer was paused or withdrawn since the check.
    if (download && (download.status === 409 || download.status === 410)) {
      await download.arrayBuffer();
      if (!(await standing())) return;
    }
    if (!download || download.status !== 200) {
      countError(download ? String(download.status) : 'network');
      summary.failedReports += 1;
      await report('failed', { reason: 'download_failed' });
      return;
    }
    const bytes = Buffer.from(await download.arrayBuffer());
    summary.downloadedBytes += bytes.length;
    if (createHash('sha256').update(bytes).digest('hex') !== offer.checksum) {
      summary.checksumMismatches += 1;
      summary.failedReports += 1;
      await report('failed', { reason: 'checksum_mismatch' });
      return;
    }

    const behaviour = behaviours.get(deviceId)!;
    if (behaviour === 'signature_invalid') {
      summary.failedReports += 1;
      await report('failed', { reason: 'signature_invalid' });
      return;
    }
    if (behaviour === 'fail') {
      summary.failedReports += 1;
      await report('failed', { reason: 'flash_write_failed' });
      return;
    }
    // Asked once more right before the boot switch, which a stop must reach.
    if (!(await standing())) return;
    for (const event of LIFECYCLE_AFTER_DOWNLOAD) await report(event);
    if (behaviour === 'roll_back') {
      summary.rolledBack += 1;
      await report('rolled_back', { reason: 'confirm_timeout' });
      return;
    }
    if (behaviour === 'go_silent') {
      summary.silent += 1;
      return;
    }
    // A real device resends `confirmed` until it is accepted.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const answer = await report('confirmed', { build_number: offer.build_number });
      if (answer?.accepted) break;
    }
    summary.confirmed += 1;
    summary.builds.set(deviceId, Number(offer.build_number));
    options.health?.installed(deviceId, Number(offer.build_number));
  }

  const failing = (id: string) => ['fail', 'roll_back', 'signature_invalid'].includes(behaviours.get(id)!);
  const order = options.burst ? [...deviceIds.filter(failing), ...deviceIds.filter((id) => !failing(id))] : deviceIds;
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < order.length) {
      const deviceId = order[next++]!;
      await runDevice(deviceId);
      done += 1;
    }
  };
  const ticker = onProgress ? setInterval(() => onProgress(done, summary), 1_000) : undefined;
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, deviceIds.length) }, worker));
  } finally {
    clearInterval(ticker);
  }
  summary.seconds = (Date.now() - startedAt) / 1000;
  onProgress?.(done, summary);
  return summary;
}

/**
 * Runs the fleet through simulated hours: each hour every device checks once (and installs what it
 * is offered), then the whole fleet runs for the hour (`FleetHealth.advance`), so that the next
 * checks report what that hour did to it. `afterHour` sees each hour's summary; answering true
 * ends the run there. Answers every hour's summary.
 */
export async function simulateHours(
  options: SimulationOptions & { health: FleetHealth },
  hours: number,
  afterHour?: (hour: number, summary: SimulationSummary) => Promise<boolean | void> | boolean | void,
): Promise<SimulationSummary[]> {
  const summaries: SimulationSummary[] = [];
  let fleet = options.fleet;
  for (let hour = 1; hour <= hours; hour += 1) {
    const summary = await simulate({ ...options, fleet });
    summaries.push(summary);
    fleet = summary.builds;
    options.health.advance(1);
    if (await afterHour?.(hour, summary)) break;
  }
  return summaries;
}
