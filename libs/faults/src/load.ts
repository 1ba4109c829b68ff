import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBinary } from '@ota/testkit';
import { call, type Answer } from './http';
import type { Ledger } from './ledger';

export interface LoadSettings {
  gateways: readonly string[];
  ledger: Ledger;
  projectId: string;
  /** A `device`-scope project token: devices register themselves on their first check. */
  fleetToken: string;
  /** The project owner's personal token, for the developer's mutations. */
  developerToken: string;
  devices: number;
  /** Client deadline of a JSON request; uploads and downloads get `transferDeadlineMs`. */
  deadlineMs: number;
  transferDeadlineMs: number;
}

type Behaviour = 'succeed' | 'fail' | 'roll_back';

/**
 * Mixed load until `stop()`: a fleet of devices that check, download, verify and report through
 * both gateways (a tenth fail to flash, a tenth roll back, the rest confirm), and a developer who
 * keeps creating groups, adding members, releasing builds and ramping the newest deployment.
 */
export class MixedLoad {
  private stopped = false;
  /** While true the developer makes no releases, so that a phase can reason about build numbers and offers. */
  holdReleases = false;
  private running: Promise<unknown> | undefined;
  /** Deployments created by releases, newest last. */
  readonly deployments: string[] = [];

  constructor(private readonly settings: LoadSettings) {}

  start(): void {
    const devices = Array.from({ length: this.settings.devices }, (_, index) => this.runDevice(index));
    this.running = Promise.all([...devices, this.runDeveloper()]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** Uploads a new build to the default channel at 100%; resolves the deployment id, or undefined. */
  async release(gateway: number): Promise<string | undefined> {
    const { ledger, gateways, projectId, developerToken, transferDeadlineMs } = this.settings;
    const form = new FormData();
    form.append('manifest', JSON.stringify({ version_label: `fault-${Date.now()}`, framework: 'esp_idf', chip_family: 'esp32' }));
    form.append('binary', new Blob([randomBinary(64 * 1024)]), 'firmware.bin');
    const answer = await call(ledger, gateways, gateway, 'POST', `/api/v1/projects/${projectId}/release/`, { token: developerToken, form, deadlineMs: transferDeadlineMs });
    if (answer?.status !== 201) return undefined;
    ledger.mutations.push({ projectId, action: 'release.created', targetId: answer.body.deployment_id });
    this.deployments.push(answer.body.deployment_id);
    return answer.body.deployment_id as string;
  }

  private async runDevice(index: number): Promise<void> {
    const { ledger, gateways, fleetToken, deadlineMs, transferDeadlineMs } = this.settings;
    const deviceId = `fault-device-${String(index).padStart(3, '0')}`;
    const gateway = index % gateways.length;
    const behaviour: Behaviour = index % 10 === 0 ? 'fail' : index % 10 === 1 ? 'roll_back' : 'succeed';
    const post = (path: string, json: unknown) => call(ledger, gateways, gateway, 'POST', path, { token: fleetToken, json, deadlineMs });
    const report = async (deploymentId: string, event: string, extra: Record<string, unknown> = {}): Promise<boolean> => {
      const answer = await post('/api/v1/ota/status/', { device_id: deviceId, deployment_id: deploymentId, event, ...extra });
      const accepted = answer?.status === 200 && answer.body.accepted === true;
      ledger.statusReports.push({ deviceId, deploymentId, event, accepted, buildNumber: typeof extra.build_number === 'number' ? extra.build_number : undefined });
      return accepted;
    };
    let build = 0;
    // A device stores `confirmed` and `rolled_back` and resends them until they are accepted (docs/api.md, "Status reports").
    let unsent: { deploymentId: string; event: string; extra: Record<string, unknown>; build?: number } | undefined;

    while (!this.stopped) {
      if (unsent) {
        if (await report(unsent.deploymentId, unsent.event, unsent.extra)) {
          if (unsent.build !== undefined) build = unsent.build;
          unsent = undefined;
        } else {
          await sleep(1_000);
          continue;
        }
      }
      const offer: Answer | undefined = await post('/api/v1/ota/check/', { device_id: deviceId, framework: 'esp_idf', chip_family: 'esp32', current_build_number: build });
      if (offer?.status !== 200 || !offer.body.update_available) {
        await sleep(offer ? 300 : 1_000);
        continue;
      }
      const deploymentId = String(offer.body.deployment_id);
      await report(deploymentId, 'offered');
      await report(deploymentId, 'download_started');
      const download = await call(ledger, gateways, gateway, 'GET', String(offer.body.url), { deadlineMs: transferDeadlineMs });
      const bytes = download?.status === 200 ? (download.body as Buffer) : undefined;
      if (!bytes || createHash('sha256').update(bytes).digest('hex') !== offer.body.checksum) {
        await report(deploymentId, 'failed', { reason: bytes ? 'checksum_mismatch' : 'download_failed' });
        continue;
      }
      if (behaviour === 'fail') {
        await report(deploymentId, 'failed', { reason: 'flash_write_failed' });
        continue;
      }
      for (const event of ['downloaded', 'flashed', 'validated', 'reboot']) await report(deploymentId, event);
      unsent =
        behaviour === 'roll_back'
          ? { deploymentId, event: 'rolled_back', extra: { reason: 'confirm_timeout' } }
          : { deploymentId, event: 'confirmed', extra: { build_number: offer.body.build_number }, build: Number(offer.body.build_number) };
    }
  }

  private async runDeveloper(): Promise<void> {
    const { ledger, gateways, projectId, developerToken, deadlineMs } = this.settings;
    const mutate = async (gateway: number, method: string, path: string, json: unknown, audit: (body: any) => { action: string; targetId: string }) => {
      const answer = await call(ledger, gateways, gateway, method, `/api/v1/projects/${projectId}${path}`, { token: developerToken, json, deadlineMs });
      if (answer && answer.status >= 200 && answer.status < 300) ledger.mutations.push({ projectId, ...audit(answer.body) });
      return answer;
    };
    for (let round = 0; !this.stopped; round += 1) {
      const gateway = round % gateways.length;
      const group = await mutate(gateway, 'POST', '/groups/', { name: `group-${round}-${Date.now()}` }, (body) => ({ action: 'group.created', targetId: body.id }));
      const devices = await call(ledger, gateways, gateway, 'GET', `/api/v1/projects/${projectId}/devices/`, { token: developerToken, deadlineMs });
      const device = devices?.status === 200 ? (devices.body as Array<{ id: string }>)[round % Math.max(1, devices.body.length)] : undefined;
      if (group?.status === 201 && device) {
        await mutate(gateway, 'POST', `/groups/${group.body.id}/members/`, { device_id: device.id }, () => ({ action: 'group.member_added', targetId: group.body.id }));
      }
      if (round % 8 === 0 && !this.holdReleases) await this.release(gateway);
      const newest = this.deployments.at(-1);
      if (newest && round % 4 === 2) {
        await mutate(gateway, 'POST', `/deployments/${newest}/transition/`, { action: 'ramp', rollout_percentage: 90 + (round % 11) }, () => ({ action: 'deployment.ramped', targetId: newest }));
      }
      await sleep(250);
    }
  }
}
