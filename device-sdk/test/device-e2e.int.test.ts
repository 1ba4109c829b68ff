import { truncateSync } from 'node:fs';
import { join } from 'node:path';
import { api, eventually, seededRandom, setupProject, startExtraGateway, testStack, type ExtraGateway } from '@ota/testkit';
import { DeviceProcess } from './harness/device-process';
import { FaultProxy, type DownloadFault } from './harness/fault-proxy';
import { deviceWorkspace, firmwareImage, releaseBuild, reportsOf, type Release } from './harness/fleet-fixture';

// The linux client (device-sdk, built with AddressSanitizer and UndefinedBehaviorSanitizer) updating
// itself from real deployments on the real stack: once cleanly, then through a seeded series of
// interruptions from our fault proxy and from SIGKILL of the client itself. Every run must end in
// the new build confirmed with the artifact's bytes, or the old build running and the failure
// reported with its reason; never `confirmed` for other bytes, never a boot pointer left on a trial.
// OTA_DEVICE_INTERRUPTIONS sets how many runs (the soak script runs 1,000), OTA_DEVICE_SEED the seed.

const IMAGE_BYTES = 200 * 1024 + 77;
const CHUNK = 16 * 1024;
const RUNS = Number(process.env.OTA_DEVICE_INTERRUPTIONS ?? 100);
const SEED = Number(process.env.OTA_DEVICE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PARALLEL = 4;
/**
 * The longest server outage of an `outage` run: OTA_DEVICE_OUTAGE_MAX_S (the soak script passes
 * 120), 20 s by default. Each run's outage lasts a seeded 2 s to that long.
 */
const OUTAGE_MAX_MS = Number(process.env.OTA_DEVICE_OUTAGE_MAX_S ?? 20) * 1000;
const OUTAGE_MIN_MS = 2_000;
/** How long a run may take to settle, beyond its outage. */
const SETTLE_MS = 60_000;
/** The URL lifetime on the gateway that the `expire` runs go through. */
const SHORT_URL_TTL_SECONDS = 1;

jest.setTimeout(Math.max(300_000, RUNS * 4_000 + (RUNS / 16) * OUTAGE_MAX_MS));

let signed: Release;
let unhealthy: Release;
let shortLived: ExtraGateway;
/** A gateway whose offers are presigned object-storage URLs (DOWNLOAD_URLS=presigned). */
let presigning: ExtraGateway;
const workspace = deviceWorkspace();

beforeAll(async () => {
  signed = await releaseBuild(firmwareImage(IMAGE_BYTES), { signed: true });
  unhealthy = await releaseBuild(firmwareImage(IMAGE_BYTES, 'OTA-HEALTH-FAIL'), { signed: false });
  [shortLived, presigning] = await Promise.all([
    startExtraGateway({ OTA_URL_TTL_SECONDS: String(SHORT_URL_TTL_SECONDS) }),
    startExtraGateway({ DOWNLOAD_URLS: 'presigned' }),
  ]);
});

afterAll(async () => {
  await Promise.all([shortLived?.stop(), presigning?.stop()]);
});

type Scenario =
  | 'cut'
  | 'truncate'
  | 'stall'
  | 'expire'
  | 'kill'
  | 'tamper'
  | 'trailers'
  | 'outage'
  | 'bad_signature'
  | 'retry_after'
  | 'unhealthy'
  | 'presigned'
  | 'pause'
  | 'cancel'
  | 'archive'
  | 'lost_record';
const SCENARIOS: readonly Scenario[] = ['cut', 'truncate', 'stall', 'expire', 'kill', 'tamper', 'trailers', 'outage', 'bad_signature', 'retry_after', 'unhealthy', 'presigned', 'pause', 'cancel', 'archive', 'lost_record'];

/**
 * The emergency stop's scenarios (docs/api.md, "Stopping devices mid-update"): at a random byte the
 * deployment is paused (and resumed once the device said it stopped), cancelled, or cancelled and
 * its build archived. Each run has a release of its own, since the stop reaches every device of it.
 */
const STOPS = { pause: 'deployment_paused', cancel: 'deployment_cancelled', archive: 'build_archived' } as const;
type StopScenario = keyof typeof STOPS;
const isStop = (scenario: Scenario): scenario is StopScenario => scenario in STOPS;

/** What a scenario must end in: the terminal event the service recorded, with its reason; `null` for none (a stop). */
const EXPECTED: Record<Scenario, { event: string; reason: string | null } | null> = {
  cut: { event: 'confirmed', reason: null },
  truncate: { event: 'confirmed', reason: null },
  stall: { event: 'confirmed', reason: null },
  expire: { event: 'confirmed', reason: null },
  kill: { event: 'confirmed', reason: null },
  trailers: { event: 'confirmed', reason: null },
  outage: { event: 'confirmed', reason: null },
  retry_after: { event: 'confirmed', reason: null },
  tamper: { event: 'failed', reason: 'checksum_mismatch' },
  bad_signature: { event: 'failed', reason: 'signature_invalid' },
  unhealthy: { event: 'rolled_back', reason: 'confirm_timeout' },
  presigned: { event: 'confirmed', reason: null },
  pause: { event: 'confirmed', reason: null },
  cancel: null,
  archive: null,
  // The saved record made unreadable (a truncated state file; on an ESP32 an NVS erase) after a
  // power cut mid-download or in the trial boot: the healthy image ends confirmed all the same.
  lost_record: { event: 'confirmed', reason: null },
};

interface RunResult {
  name: string;
  scenario: Scenario;
  refetched: number;
  events: string[];
  /** Downloads that went through the gateway (and so through our proxy). */
  gatewayDownloads: number;
  /** For a lost_record run: when the record was lost. */
  recordLoss?: string;
  /** For an outage run: how long the outage lasted, and the 503s it answered. */
  outage?: { ms: number; answers: number };
}


async function runDevice(name: string, scenario: Scenario, atByte: number, gatewayUrl?: string, outageMs = 0): Promise<RunResult> {
  const release = scenario === 'unhealthy' ? unhealthy : isStop(scenario) ? await releaseBuild(signed.image, { signed: false }) : signed;
  const target = gatewayUrl ?? (scenario === 'expire' ? shortLived.url : scenario === 'presigned' ? presigning.url : testStack().gatewayUrl);
  const proxy = new FaultProxy(target);
  const serverUrl = await proxy.listen();
  const deviceId = `${name}-${scenario}`;
  const device = new DeviceProcess(join(workspace.root, deviceId), [
    '--server', serverUrl,
    '--device-id', deviceId,
    '--factory', workspace.factoryImage,
    ...(release.publicKeyHex ? ['--key', release.publicKeyHex, '--require-signature'] : []),
    '--retry-base', '200', '--retry-max', '2000', '--stall-timeout', '2', '--trial-timeout', '2', '--poll', '1',
  ], release.fixture.deviceScopeToken);
  if (['cut', 'truncate', 'stall', 'expire', 'kill', 'tamper', 'trailers'].includes(scenario)) {
    proxy.fault = { kind: scenario, atByte } as DownloadFault;
  }
  if (scenario === 'outage') proxy.fault = { kind: 'outage', atByte, durationMs: outageMs };
  if (isStop(scenario)) {
    proxy.fault = { kind: 'stop', atByte };
    proxy.onStop = () => stopDeployment(release, scenario);
  }
  proxy.stallMs = scenario === 'expire' ? (SHORT_URL_TTL_SECONDS + 1) * 1000 : 3000;
  // The kill lands once the device wrote every byte sent, so that what it fetches again is its own doing.
  proxy.onKill = async (sentUpTo) => {
    await device.waitForSlotBytes(sentUpTo, 10_000);
    await device.kill();
  };
  const recordLoss = scenario === 'lost_record' ? loseRecord(device, proxy, atByte) : undefined;
  proxy.corruptSignature = scenario === 'bad_signature';
  proxy.checkFailures = scenario === 'retry_after' ? 2 : 0;
  try {
    device.start();
    // A paused device holds; it is resumed once it told the service it stopped.
    if (scenario === 'pause') void resumeOnceStopped(release, deviceId);
    const outcome = await device.settle(SETTLE_MS + outageMs);
    const reports = await reportsOf(release.fixture, deviceId);
    const terminal = reports.filter((report) => ['confirmed', 'failed', 'rolled_back'].includes(report.event));
    const running = device.runningImage();
    const expected = EXPECTED[scenario];
    if (recordLoss) expect({ name, recordLoss: recordLoss() }).toEqual({ name, recordLoss: expect.stringMatching(/^lost /) });
    const context = { name, scenario, atByte, outcome, reports: reports.map((report) => `${report.event}${report.reason ? `:${report.reason}` : ''}`) };
    // The service recorded the expected end, and only that end; a stop is reported once, with its status.
    expect({ ...context, terminal: terminal.map((report) => [report.event, report.reason]) }).toEqual({ ...context, terminal: expected ? [[expected.event, expected.reason]] : [] });
    if (isStop(scenario)) expect({ ...context, stops: reports.filter((report) => report.event === 'stopped').map((report) => report.reason) }).toEqual({ ...context, stops: [STOPS[scenario]] });
    expect(running.trial).toBe(false);
    if (!expected) {
      // Abandoned: nothing switched, and the device says why.
      expect({ name, bytes: running.bytes.equals(workspace.factory), stopped: outcome.stopped }).toEqual({ name, bytes: true, stopped: STOPS[scenario as StopScenario] });
      expect(outcome.running_build).toBe(0);
    } else if (expected.event === 'confirmed') {
      expect(outcome.outcome).toBe(expected.event);
      expect({ name, bytes: running.sha256 }).toEqual({ name, bytes: release.sha256 });
      expect(terminal[0]?.build_number).toBe(release.buildNumber);
      expect(outcome.running_build).toBe(release.buildNumber);
    } else {
      expect(outcome.outcome).toBe(expected.event);
      expect({ name, bytes: running.bytes.equals(workspace.factory) }).toEqual({ name, bytes: true });
      expect(outcome.running_build).toBe(0);
    }
    // What the device fetched again: bytes it had received, requested a second time.
    let reached = 0;
    let refetched = 0;
    for (const download of proxy.downloads.filter((record) => record.status === 200 || record.status === 206)) {
      refetched += Math.max(0, reached - download.rangeStart);
      reached = Math.max(reached, download.rangeStart + download.bytesSent);
    }
    return { name, scenario, refetched, events: context.reports, gatewayDownloads: proxy.downloads.length, recordLoss: recordLoss?.(), outage: outageMs ? { ms: outageMs, answers: proxy.outageAnswers } : undefined };
  } finally {
    await device.kill();
    await proxy.close();
  }
}

/**
 * A power cut after which the saved record cannot be read: in half the runs (odd `atByte`) while the
 * device reports `reboot`, its boot already switched to the trial; in the other half mid-download,
 * at `atByte`. The record is cut to 7 bytes before power comes back.
 */
function loseRecord(device: DeviceProcess, proxy: FaultProxy, atByte: number): () => string {
  let cut = false;
  if (atByte % 2 === 1) {
    proxy.onStatus = async (event) => {
      if (event !== 'reboot' || cut) return;
      cut = true;
      await device.kill();
    };
  } else {
    proxy.fault = { kind: 'kill', atByte };
  }
  let damaged = false;
  device.beforeRestart = () => {
    if (damaged) return;
    damaged = true;
    truncateSync(join(device.dir, 'state'), 7);
  };
  // What happened, for the run's result: a run whose record was never damaged proved nothing.
  return () => (!damaged ? 'record never damaged' : atByte % 2 === 1 ? 'lost in the trial boot' : 'lost mid-download');
}

function transition(release: Release, action: string) {
  return api('POST', `/api/v1/projects/${release.fixture.project.id}/deployments/${release.deploymentId}/transition/`, { token: release.fixture.user.token, json: { action } });
}

/** The operator's stop of a stop scenario, made while the proxy holds the device's download. */
async function stopDeployment(release: Release, scenario: StopScenario): Promise<void> {
  expect((await transition(release, scenario === 'pause' ? 'pause' : 'cancel')).status).toBe(200);
  if (scenario === 'archive') {
    const artifacts = await api('GET', `/api/v1/projects/${release.fixture.project.id}/artifacts/`, { token: release.fixture.user.token });
    const archived = await api('PATCH', `/api/v1/projects/${release.fixture.project.id}/artifacts/${artifacts.body[0].id}/`, { token: release.fixture.user.token, json: { archived: true } });
    expect(archived.status).toBe(200);
  }
}

/** Resumes the deployment once the device reported that the pause stopped it. */
async function resumeOnceStopped(release: Release, deviceId: string): Promise<void> {
  await eventually(
    () => reportsOf(release.fixture, deviceId),
    (reports) => reports.some((report) => report.event === 'stopped'),
    50_000,
  );
  expect((await transition(release, 'resume')).status).toBe(200);
}

describe('the linux client on the real stack', () => {
  it('updates itself: check, download, verify, report, reboot into the new slot, confirm', async () => {
    const result = await runDevice('clean', 'retry_after', 0);
    expect(result.events).toEqual(['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed']);
    expect(result.refetched).toBe(0);
    expect(result.gatewayDownloads).toBe(1);
  });

  it('reports with each check how it has run since its install, counted across its restarts', async () => {
    const f = await setupProject({ name: 'device health' });
    const deviceId = 'health-device';
    const start = async (resetReason: string) => {
      const device = new DeviceProcess(join(workspace.root, deviceId), ['--server', testStack().gatewayUrl, '--device-id', deviceId, '--factory', workspace.factoryImage, '--poll', '1', '--health', '--reset-reason', resetReason], f.deviceScopeToken);
      device.start();
      return device.settle(SETTLE_MS);
    };
    // Started after a watchdog reset, then again after a power-on: two boots of build 0, one abnormal.
    expect((await start('task_watchdog')).outcome).toBe('no_active_deployment');
    expect((await start('power_on')).outcome).toBe('no_active_deployment');
    const [device] = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?q=${deviceId}`, { token: f.user.token })).body;
    expect(device.health).toMatchObject({ reset_reason: 'power_on', boots: 2, abnormal_boots: 1, build_number: 0, min_free_heap: null });
    expect(device.health.uptime_seconds).toBeGreaterThanOrEqual(0);
  });

  it('resumes a download answered chunked with an ETag trailer, and the late header line writes nowhere it should not', async () => {
    // The client under clang's AddressSanitizer with use-after-return detection: a header callback
    // that wrote through a pointer to the head of a call that had returned aborted here.
    const result = await runDevice('trailers', 'trailers', Math.floor(IMAGE_BYTES / 3));
    expect(result.events.at(-1)).toBe('confirmed');
    expect(result.refetched).toBe(0);
    expect(result.gatewayDownloads).toBe(2);
  });

  it('updates itself from object storage when the offer is a presigned URL, the bytes bypassing the gateway', async () => {
    const result = await runDevice('presigned', 'retry_after', 0, presigning.url);
    expect(result.events).toEqual(['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed']);
    expect(result.gatewayDownloads).toBe(0);
  });

  it(`ends every one of ${RUNS} seeded interruptions in a confirmed correct image or a clean, reported failure`, async () => {
    process.stdout.write(`[device interruptions] ${RUNS} runs, seed ${SEED} (OTA_DEVICE_SEED=${SEED} repeats them)\n`);
    const next = seededRandom(SEED);
    const plan = Array.from({ length: RUNS }, (_, index) => ({
      name: `run${index}`,
      scenario: SCENARIOS[index % SCENARIOS.length]!,
      atByte: Math.floor(next() * IMAGE_BYTES),
      outageMs: Math.round(OUTAGE_MIN_MS + next() * (OUTAGE_MAX_MS - OUTAGE_MIN_MS)),
    }));
    const results: RunResult[] = [];
    let cursor = 0;
    const worker = async () => {
      while (cursor < plan.length) {
        const run = plan[cursor++]!;
        results.push(await runDevice(run.name, run.scenario, run.atByte, undefined, run.scenario === 'outage' ? run.outageMs : 0));
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    expect(results).toHaveLength(RUNS);
    const worst = (scenario: Scenario) => Math.max(0, ...results.filter((result) => result.scenario === scenario).map((result) => result.refetched));
    // A link fault costs no byte twice; a kill (a power cut) at most one chunk.
    for (const scenario of ['cut', 'truncate', 'stall', 'expire', 'trailers', 'outage', 'retry_after', 'pause'] as const) expect({ scenario, refetched: worst(scenario) }).toEqual({ scenario, refetched: 0 });
    expect(worst('kill')).toBeLessThanOrEqual(CHUNK);
    const summary = SCENARIOS.map((scenario) => `${scenario} ${results.filter((result) => result.scenario === scenario).length} (refetched at most ${worst(scenario)} B)`);
    process.stdout.write(`[device interruptions] all ${RUNS} settled as expected: ${summary.join(', ')}\n`);
    const outages = results.flatMap((result) => (result.outage ? [result.outage] : []));
    if (outages.length) {
      const seconds = outages.map((outage) => outage.ms / 1000);
      process.stdout.write(`[device interruptions] outages lasted ${Math.min(...seconds).toFixed(1)} to ${Math.max(...seconds).toFixed(1)} s, ${Math.min(...outages.map((outage) => outage.answers))} to ${Math.max(...outages.map((outage) => outage.answers))} answers of 503 each\n`);
    }
    const losses = results.filter((result) => result.recordLoss).map((result) => result.recordLoss!);
    process.stdout.write(`[device interruptions] records lost: ${losses.filter((loss) => loss.includes('trial')).length} in the trial boot, ${losses.filter((loss) => loss.includes('download')).length} mid-download\n`);
  });
});
