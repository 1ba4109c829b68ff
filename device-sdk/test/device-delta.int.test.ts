import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFEST, api, eventually, randomBinary, seededRandom, setupProject, testStack, uploadForm, type ProjectFixture } from '@ota/testkit';
import { DeviceProcess } from './harness/device-process';
import { FaultProxy } from './harness/fault-proxy';
import { deviceWorkspace, reportsOf } from './harness/fleet-fixture';

// Delta updates on the real stack (docs/api.md, "Delta patches"): the linux client (`ota-device
// --deltas`) runs a build of the project, is offered the next one with the patch that the
// artifacts service made with detools, downloads the patch alone and applies it into its slot.
// Seeded runs interrupt it: the link cut at a byte of the patch, SIGKILL at a byte of the patch or
// at a byte of the image it writes (a power cut mid-apply), the patch tampered on the wire, and
// the running image changed under the client after it said what it runs (a base that is not what
// it claimed). Every run must end in the new build confirmed with the target's bytes, either from
// the patch or by a clean fallback to the full image, never `failed`; a kill fetches at most one
// chunk of patch again. OTA_DELTA_RUNS sets how many runs (the soak script runs more), OTA_DEVICE_SEED the seed.

const IMAGE_BYTES = 512 * 1024 + 77;
const CHUNK = 16 * 1024;
const RUNS = Number(process.env.OTA_DELTA_RUNS ?? 18);
const SEED = Number(process.env.OTA_DEVICE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PARALLEL = 3;
const SETTLE_MS = 60_000;
const FORMAT = 'detools-sequential-heatshrink-8-7';
const INSERTED_BYTES = 24 * 1024;
const LINK_BYTES_PER_SECOND = 64 * 1024;

jest.setTimeout(Math.max(300_000, RUNS * 8_000));

type Kind = 'clean' | 'cut' | 'kill' | 'kill_apply' | 'tamper' | 'wrong_base';
const KINDS: readonly Kind[] = ['clean', 'cut', 'kill', 'kill_apply', 'tamper', 'wrong_base'];
/**
 * How each kind must download: the patch applied, or a fallback to the image for one of these
 * reasons. A flipped byte may also leave the image as it was (bits of the patch's last adjustment,
 * which moves nothing after the last segment): the patch is then applied, and the image's SHA-256
 * check, which passed, says the bytes are the build's.
 */
const FALLBACKS: Record<Kind, string[] | null> = {
  clean: null,
  cut: null,
  kill: null,
  kill_apply: null,
  tamper: ['checksum_mismatch', 'patch_refused', 'patch_incomplete'],
  wrong_base: ['checksum_mismatch', 'patch_refused', 'patch_incomplete'],
};

interface Fixture {
  project: ProjectFixture;
  base: Buffer;
  target: Buffer;
  targetSha256: string;
  buildNumber: number;
  patch: { size: number; sha256: string };
}

/**
 * Two releases of a firmware as a one-line change leaves them: the target is the base with a
 * stretch inserted a third of the way in (everything after it moves) and a byte changed every
 * 4 KiB, so that the patch is a real fraction of the image.
 */
function releases(): { base: Buffer; target: Buffer } {
  const base = randomBinary(IMAGE_BYTES);
  const inserted = randomBytes(INSERTED_BYTES);
  const cut = Math.floor(IMAGE_BYTES / 3);
  const target = Buffer.concat([base.subarray(0, cut), inserted, base.subarray(cut, IMAGE_BYTES - inserted.length)]);
  for (let at = 100; at < target.length; at += 4096) target[at] = target[at]! ^ 0x5a;
  return { base, target };
}

const workspace = deviceWorkspace();
let fixture: Fixture;
let baseImage: string;

beforeAll(async () => {
  const { base, target } = releases();
  const project = await setupProject({ name: 'device sdk deltas' });
  const projectPath = `/api/v1/projects/${project.project.id}`;
  const uploaded = await api('POST', `${projectPath}/artifacts/`, { token: project.user.token, body: uploadForm({ ...MANIFEST, version_label: '1.0.0' }, base) });
  if (uploaded.status !== 201) throw new Error(`base not uploaded: ${uploaded.status} ${JSON.stringify(uploaded.body)}`);
  const released = await api('POST', `${projectPath}/release/`, { token: project.user.token, body: uploadForm({ ...MANIFEST, version_label: '1.1.0' }, target) });
  if (released.status !== 201) throw new Error(`release refused: ${released.status} ${JSON.stringify(released.body)}`);
  const targetId = (await api('GET', `${projectPath}/artifacts/`, { token: project.user.token })).body.find((artifact: { version_label: string }) => artifact.version_label === '1.1.0').id;
  const patches = `${projectPath}/artifacts/${targetId}/patches/`;
  expect((await api('POST', patches, { token: project.user.token, json: { base_artifact_id: uploaded.body.id } })).status).toBe(202);
  const ready = await eventually(
    () => api('GET', patches, { token: project.apiToken }),
    (answer) => answer.body[0]?.state === 'ready' || answer.body[0]?.state === 'failed',
    120_000,
  );
  expect(ready.body[0]).toMatchObject({ state: 'ready', format: FORMAT });
  fixture = {
    project,
    base,
    target,
    targetSha256: createHash('sha256').update(target).digest('hex'),
    buildNumber: released.body.build_number,
    patch: { size: ready.body[0].size, sha256: ready.body[0].sha256 },
  };
  baseImage = join(workspace.root, 'base.bin');
  writeFileSync(baseImage, base);
});

/** A counter of rollout's metrics (docs/operations.md), summed over its series that carry `label`. */
async function rolloutCounter(name: string, label = ''): Promise<number> {
  const exposition = await (await fetch(testStack().metricsUrls.rollout!)).text();
  return exposition
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

interface RunResult {
  name: string;
  kind: Kind;
  /** Patch bytes the device fetched again. */
  refetched: number;
  /** Bytes of the image downloaded whole (a fallback). */
  imageBytes: number;
  delta: { delta?: string; delta_failure?: string; patch_bytes?: number };
}

/** Kills the device once the image it writes (the inactive slot) holds `bytes` bytes: a power cut mid-apply. */
function killAtImageByte(device: DeviceProcess, bytes: number): () => void {
  let stopped = false;
  const timer = setInterval(() => {
    const boot = existsSync(join(device.dir, 'boot')) ? readFileSync(join(device.dir, 'boot'), 'utf8') : '';
    const slot = join(device.dir, /active=1/.test(boot) ? 'slot0.bin' : 'slot1.bin');
    if (!stopped && existsSync(slot) && statSync(slot).size >= bytes) {
      stopped = true;
      clearInterval(timer);
      void device.kill();
    }
  }, 5);
  return () => clearInterval(timer);
}

async function runDevice(name: string, kind: Kind, atByte: number): Promise<RunResult> {
  const proxy = new FaultProxy(testStack().gatewayUrl);
  const serverUrl = await proxy.listen();
  const deviceId = `${name}-${kind}`;
  const device = new DeviceProcess(
    join(workspace.root, deviceId),
    ['--server', serverUrl, '--device-id', deviceId, '--factory', baseImage, '--deltas', '--retry-base', '200', '--retry-max', '2000', '--stall-timeout', '2', '--trial-timeout', '5', '--poll', '1'],
    fixture.project.deviceScopeToken,
  );
  let stopWatching = () => {};
  if (kind === 'cut' || kind === 'kill' || kind === 'tamper') proxy.fault = { kind, atByte };
  // A kill's refetch is counted from what the proxy sent: on a link this slow the device has read
  // what was sent (a loopback link would have the whole patch in socket buffers at once).
  if (kind === 'kill' || kind === 'kill_apply') proxy.throttleBytesPerSecond = LINK_BYTES_PER_SECOND;
  // A kill at a byte of the patch lands once the device had a moment to take what was sent.
  proxy.onKill = async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await device.kill();
  };
  if (kind === 'kill_apply') stopWatching = killAtImageByte(device, atByte);
  if (kind === 'wrong_base') {
    // Once the device said what it runs and the patch started to arrive, its running image changes
    // where the apply reads last (the base's bytes behind the inserted stretch end there).
    proxy.fault = { kind: 'stop', atByte };
    proxy.onStop = async () => {
      const running = join(device.dir, 'slot0.bin');
      const bytes = readFileSync(running);
      const at = IMAGE_BYTES - INSERTED_BYTES - 1000;
      bytes[at] = bytes[at]! ^ 0xff;
      writeFileSync(running, bytes);
    };
  }
  try {
    device.start();
    const outcome = await device.settle(SETTLE_MS);
    stopWatching();
    const reports = (await reportsOf(fixture.project, deviceId)) as Array<{ event: string; reason: string | null; detail?: Record<string, unknown> | null }>;
    const context = { name, kind, atByte, outcome, reports: reports.map((report) => `${report.event}${report.reason ? `:${report.reason}` : ''}`) };
    expect({ ...context, terminal: reports.filter((report) => ['confirmed', 'failed', 'rolled_back'].includes(report.event)).map((report) => report.event) }).toEqual({ ...context, terminal: ['confirmed'] });
    const running = device.runningImage();
    expect({ name, running: running.sha256, trial: running.trial, build: outcome.running_build }).toEqual({ name, running: fixture.targetSha256, trial: false, build: fixture.buildNumber });
    const delta = (reports.find((report) => report.event === 'downloaded')?.detail ?? {}) as RunResult['delta'];
    const fallbacks = FALLBACKS[kind];
    const harmlessFlip = kind === 'tamper' && delta.delta === 'applied';
    if (fallbacks && !harmlessFlip) expect({ name, delta: delta.delta, failure: fallbacks.includes(String(delta.delta_failure)) }).toEqual({ name, delta: 'fell_back', failure: true });
    else expect({ name, delta }).toEqual({ name, delta: { delta: 'applied', patch_bytes: fixture.patch.size } });
    // What the device fetched of the patch again, and of the image at all (the patch is the first download).
    let reached = 0;
    let refetched = 0;
    let imageBytes = 0;
    for (const download of proxy.downloads.filter((record) => record.status === 200 || record.status === 206)) {
      if (download.total === fixture.patch.size) {
        refetched += Math.max(0, reached - download.rangeStart);
        reached = Math.max(reached, download.rangeStart + download.bytesSent);
      } else {
        imageBytes += download.bytesSent;
      }
    }
    return { name, kind, refetched, imageBytes, delta };
  } finally {
    stopWatching();
    await device.kill();
    await proxy.close();
  }
}

describe('delta updates of the linux client on the real stack', () => {
  it('downloads only the patch and applies it into its slot: the image it confirms is the build, byte for byte', async () => {
    const [patched, patchBytes] = [await rolloutCounter('ota_device_downloads_total', 'how="patch"'), await rolloutCounter('ota_delta_patch_bytes_total')];
    const result = await runDevice('delta-clean', 'clean', 0);
    // Rollout counts how the image came (this test's stack is shared: at least this device's).
    expect((await rolloutCounter('ota_device_downloads_total', 'how="patch"')) - patched).toBeGreaterThanOrEqual(1);
    expect((await rolloutCounter('ota_delta_patch_bytes_total')) - patchBytes).toBeGreaterThanOrEqual(fixture.patch.size);
    expect(result.imageBytes).toBe(0);
    expect(result.refetched).toBe(0);
    expect(fixture.patch.size).toBeLessThan(IMAGE_BYTES / 4);
    process.stdout.write(`[delta device] a ${fixture.patch.size} B patch for a ${IMAGE_BYTES} B image (${((100 * fixture.patch.size) / IMAGE_BYTES).toFixed(1)}%)\n`);
  });

  it(`ends every one of ${RUNS} seeded interrupted runs (seed ${SEED}) in the build confirmed, from the patch or the image, never failed`, async () => {
    const next = seededRandom(SEED);
    const plan = Array.from({ length: RUNS }, (_, index) => {
      const kind = KINDS[index % KINDS.length]!;
      // A wrong base comes in the patch's first half, before the apply reads the changed bytes.
      const span = kind === 'kill_apply' ? IMAGE_BYTES - 1 : kind === 'wrong_base' ? fixture.patch.size / 2 : fixture.patch.size - 2;
      const atByte = 1 + Math.floor(next() * span);
      return { name: `delta-${SEED}-${index}`, kind, atByte };
    });
    const fallbacksBefore = await rolloutCounter('ota_device_downloads_total', 'how="fell_back"');
    const results: RunResult[] = [];
    let cursor = 0;
    const worker = async () => {
      while (cursor < plan.length) {
        const run = plan[cursor++]!;
        results.push(await runDevice(run.name, run.kind, run.atByte));
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    expect(results).toHaveLength(RUNS);
    const worst = (kind: Kind) => Math.max(0, ...results.filter((result) => result.kind === kind).map((result) => result.refetched));
    const fellBack = results.filter((result) => result.delta.delta === 'fell_back').length;
    expect((await rolloutCounter('ota_device_downloads_total', 'how="fell_back"')) - fallbacksBefore).toBeGreaterThanOrEqual(fellBack);
    expect({ cut: worst('cut') }).toEqual({ cut: 0 });
    expect(worst('kill')).toBeLessThanOrEqual(CHUNK);
    expect(worst('kill_apply')).toBeLessThanOrEqual(CHUNK);
    for (const result of results.filter((run) => run.delta.delta === 'applied')) expect({ name: result.name, imageBytes: result.imageBytes }).toEqual({ name: result.name, imageBytes: 0 });
    const summary = KINDS.map((kind) => {
      const runs = results.filter((result) => result.kind === kind);
      const fellBack = new Map<string, number>();
      for (const result of runs.filter((run) => run.delta.delta === 'fell_back')) fellBack.set(String(result.delta.delta_failure), (fellBack.get(String(result.delta.delta_failure)) ?? 0) + 1);
      const applied = runs.filter((result) => result.delta.delta === 'applied').length;
      const fallbacks = [...fellBack].map(([failure, count]) => `${failure} ${count}`).join(', ');
      return `${kind} ${runs.length} (applied ${applied}${fallbacks ? `, fell back: ${fallbacks}` : ''}; patch refetched at most ${worst(kind)} B)`;
    });
    process.stdout.write(`[delta device] all ${RUNS} settled confirmed: ${summary.join(', ')}\n`);
  });
});
