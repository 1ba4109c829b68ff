import { join } from 'node:path';
import { api, eventually, startExtraGateway, testStack, type ExtraGateway } from '@ota/testkit';
import { DeviceProcess, type DeviceOutcome } from './harness/device-process';
import { FaultProxy } from './harness/fault-proxy';
import { deviceWorkspace, firmwareImage, releaseBuild, reportsOf, type Release } from './harness/fleet-fixture';

// The emergency stop (docs/api.md, "Stopping devices mid-update"): a fleet of linux clients
// downloads through slow links, each behind its own proxy, and the deployment is paused or
// cancelled while every one of them is mid-download. None may switch its boot slot; each stops
// within the client's ask interval (OTA_DEFAULT_STOP_CHECK_BYTES, 256 KiB) of the stop, plus what
// the link held in flight; a pause holds the bytes and a resume continues from them.

const DEVICES = 20;
const IMAGE_BYTES = 1024 * 1024 + 333;
const STOP_CHECK_BYTES = 256 * 1024;
/** Each device's link: about 16 s for the build, so that the stop lands mid-download. */
const LINK_BYTES_PER_SECOND = 64 * 1024;
/** Past the first ask (at 256 KiB), which must have let the download go on. */
const STOP_AFTER_BYTES = 320 * 1024;
/**
 * What a link may carry beyond what the device read when it stopped: the proxy keeps sending while
 * the device asks (a round trip through gateway, registry and rollout, slower on a loaded machine),
 * so a second of the link.
 */
const IN_FLIGHT = LINK_BYTES_PER_SECOND;

jest.setTimeout(300_000);

const workspace = deviceWorkspace();
/**
 * A gateway that suggests a check every second, where the stack's suggests 30 minutes: a held
 * device learns of the resume at its next check.
 */
let quickPolls: ExtraGateway;

beforeAll(async () => {
  quickPolls = await startExtraGateway({ CHECK_POLL_INTERVAL_SECONDS: '1' });
});

afterAll(async () => {
  await quickPolls?.stop();
});

interface FleetDevice {
  deviceId: string;
  proxy: FaultProxy;
  device: DeviceProcess;
}

async function startFleet(release: Release, name: string, gatewayUrl: string): Promise<FleetDevice[]> {
  return Promise.all(
    Array.from({ length: DEVICES }, async (_, index) => {
      const deviceId = `${name}-${index}`;
      const proxy = new FaultProxy(gatewayUrl);
      proxy.throttleBytesPerSecond = LINK_BYTES_PER_SECOND;
      const serverUrl = await proxy.listen();
      const device = new DeviceProcess(
        join(workspace.root, deviceId),
        ['--server', serverUrl, '--device-id', deviceId, '--factory', workspace.factoryImage, '--retry-base', '200', '--retry-max', '2000', '--stall-timeout', '5', '--trial-timeout', '5', '--poll', '1'],
        release.fixture.deviceScopeToken,
      );
      device.start();
      return { deviceId, proxy, device };
    }),
  );
}

async function stopFleet(fleet: readonly FleetDevice[]): Promise<void> {
  await Promise.all(fleet.map(async ({ device, proxy }) => {
    await device.kill();
    await proxy.close();
  }));
}

const sent = (proxy: FaultProxy) => proxy.downloads.reduce((sum, download) => sum + download.bytesSent, 0);

/** Waits until every device's link carried `bytes` of the build: the whole fleet is mid-download. */
async function everyDeviceReached(fleet: readonly FleetDevice[], bytes: number): Promise<void> {
  const slowest = await eventually(
    async () => Math.min(...fleet.map(({ proxy }) => sent(proxy))),
    (least) => least >= bytes,
    60_000,
  );
  expect(slowest).toBeGreaterThanOrEqual(bytes);
  // Mid-download, not done: the stop must land before the end.
  expect(Math.max(...fleet.map(({ proxy }) => sent(proxy)))).toBeLessThan(IMAGE_BYTES - STOP_CHECK_BYTES - IN_FLIGHT);
}

function transition(release: Release, action: string) {
  return api('POST', `/api/v1/projects/${release.fixture.project.id}/deployments/${release.deploymentId}/transition/`, { token: release.fixture.user.token, json: { action } });
}

/** Waits until every device told the service it stopped, with `reason`. */
async function everyDeviceStopped(release: Release, fleet: readonly FleetDevice[], reason: string): Promise<void> {
  for (const { deviceId } of fleet) {
    const reports = await eventually(
      () => reportsOf(release.fixture, deviceId),
      (lines) => lines.some((line) => line.event === 'stopped'),
      60_000,
    );
    expect({ deviceId, stops: reports.filter((line) => line.event === 'stopped').map((line) => line.reason) }).toEqual({ deviceId, stops: [reason] });
    expect({ deviceId, failures: reports.filter((line) => ['failed', 'validated', 'reboot', 'confirmed'].includes(line.event)) }).toEqual({ deviceId, failures: [] });
  }
}

function reportBytesAfterStop(what: string, fleet: readonly FleetDevice[]): number[] {
  const after = fleet.map(({ proxy }) => proxy.bytesSinceMark());
  const mean = Math.round(after.reduce((sum, bytes) => sum + bytes, 0) / after.length);
  process.stdout.write(`[emergency stop] ${what}: ${DEVICES} devices fetched ${Math.min(...after)}..${Math.max(...after)} B after the stop (mean ${mean} B; bound ${STOP_CHECK_BYTES} + ${IN_FLIGHT} in flight)\n`);
  return after;
}

test(`a pause reaches ${DEVICES} devices mid-download: none switches, each holds its bytes, and a resume continues from them`, async () => {
  const release = await releaseBuild(firmwareImage(IMAGE_BYTES), { signed: false });
  const fleet = await startFleet(release, 'paused', quickPolls.url);
  try {
    await everyDeviceReached(fleet, STOP_AFTER_BYTES);
    expect((await transition(release, 'pause')).status).toBe(200);
    for (const { proxy } of fleet) proxy.mark();
    await everyDeviceStopped(release, fleet, 'deployment_paused');
    // Held: nothing more crosses any link while the deployment stays paused.
    const held = fleet.map(({ proxy }) => sent(proxy));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(fleet.map(({ proxy }) => sent(proxy))).toEqual(held);
    for (const { deviceId, device } of fleet) expect({ deviceId, switched: !device.runningImage().bytes.equals(workspace.factory) }).toEqual({ deviceId, switched: false });
    for (const after of reportBytesAfterStop('paused', fleet)) expect(after).toBeLessThanOrEqual(STOP_CHECK_BYTES + IN_FLIGHT);

    expect((await transition(release, 'resume')).status).toBe(200);
    const outcomes: DeviceOutcome[] = await Promise.all(fleet.map(({ device }) => device.settle(120_000)));
    for (const [index, { deviceId, device, proxy }] of fleet.entries()) {
      expect({ deviceId, outcome: outcomes[index]!.outcome, running: device.runningImage().sha256 }).toEqual({ deviceId, outcome: 'confirmed', running: release.sha256 });
      // Resumed from the saved offset: only what the link held at the stop came twice.
      expect({ deviceId, fetchedTwice: sent(proxy) - IMAGE_BYTES <= IN_FLIGHT }).toEqual({ deviceId, fetchedTwice: true });
    }
    const fetched = fleet.map(({ proxy }) => sent(proxy) - IMAGE_BYTES);
    process.stdout.write(`[emergency stop] resumed: all ${DEVICES} confirmed; bytes fetched twice ${Math.min(...fetched)}..${Math.max(...fetched)} B\n`);
  } finally {
    await stopFleet(fleet);
  }
});

test(`a cancel reaches ${DEVICES} devices mid-download: none switches, each abandons the download and says why, none counts as failed`, async () => {
  const release = await releaseBuild(firmwareImage(IMAGE_BYTES), { signed: false });
  const fleet = await startFleet(release, 'cancelled', testStack().gatewayUrl);
  try {
    await everyDeviceReached(fleet, STOP_AFTER_BYTES);
    expect((await transition(release, 'cancel')).status).toBe(200);
    for (const { proxy } of fleet) proxy.mark();
    const outcomes: DeviceOutcome[] = await Promise.all(fleet.map(({ device }) => device.settle(120_000)));
    for (const [index, { deviceId, device }] of fleet.entries()) {
      const outcome = outcomes[index]!;
      expect({ deviceId, stopped: outcome.stopped, running_build: outcome.running_build, switched: !device.runningImage().bytes.equals(workspace.factory) }).toEqual({
        deviceId,
        stopped: 'deployment_cancelled',
        running_build: 0,
        switched: false,
      });
    }
    for (const after of reportBytesAfterStop('cancelled', fleet)) expect(after).toBeLessThanOrEqual(STOP_CHECK_BYTES + IN_FLIGHT);
    await everyDeviceStopped(release, fleet, 'deployment_cancelled');
    const summary = await api('GET', `/api/v1/projects/${release.fixture.project.id}/deployments/${release.deploymentId}/summary/`, { token: release.fixture.user.token });
    expect(summary.body.failure_count).toBe(0);
  } finally {
    await stopFleet(fleet);
  }
});
