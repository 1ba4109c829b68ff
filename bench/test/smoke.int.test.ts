import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A short run of every benchmark scenario on its own stack, as CI can afford it. It asserts what
// the scenarios measure correctly, never how fast: these machines are shared and noisy.

const root = join(__dirname, '..', '..');
const SCENARIOS = ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's9', 's10', 's11', 's12', 's13', 's14', 's15', 's16', 's17', 's18', 's19', 's20', 's21', 's22'];

/**
 * Only a guard against a hang, never a bound on speed: the whole smoke run takes about 220 s on a
 * quiet two-core machine, and a CI run on a slower one was killed at the 240 s this used to be.
 */
const HANG_GUARD_MS = 15 * 60_000;

/**
 * Runs the bench without blocking this worker: jest runs every file in one process, and a worker
 * blocked for minutes never reads the gateway closing its idle keep-alive connections (after
 * HTTP_KEEP_ALIVE_TIMEOUT_MS), so the next file's first request went out on a closed one.
 */
function runBench(args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'bench', 'dist', 'cli.js'), ...args], { encoding: 'utf8', timeout: HANG_GUARD_MS, maxBuffer: 64 * 1024 * 1024 }, (error, _stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr });
    });
  });
}

it('runs every scenario and reports complete results', async () => {
  const out = mkdtempSync(join(tmpdir(), 'ota-bench-smoke-'));
  try {
    const run = await runBench(['all', '--smoke', '--out', out]);
    // A failed run shows the end of what the bench wrote, which says which scenario stopped and why.
    expect({ status: run.status, stderrEnd: run.status === 0 ? '' : run.stderr.slice(-6000) }).toEqual({ status: 0, stderrEnd: '' });
    expect(run.stderr).not.toMatch(/Error|failed/);
    const result = (name: string) => JSON.parse(readFileSync(join(out, `${name}.json`), 'utf8'));
    for (const name of SCENARIOS) {
      expect(result(name)).toMatchObject({ scenario: name, mode: 'smoke', machine: { cores: expect.any(Number) } });
    }
    // s18's deployments had everything this checkout has that decides when a device is offered.
    expect(result('s18').features).toEqual(['maintenance_windows', 'caps', 'health_regression']);
    for (const name of ['s0', 's1', 's2', 's3', 's4', 's5', 's18']) {
      const [step] = result(name).steps;
      expect([name, step.latency.requests]).toEqual([name, expect.any(Number)]);
      expect(step.latency.requests).toBeGreaterThan(0);
      // No answer of the routine paths may be a server error.
      expect([name, Object.keys(step.latency.errors).filter((status) => status.startsWith('5') || status === '0')]).toEqual([name, []]);
      expect(Object.keys(step.usage)).toEqual(expect.arrayContaining(name === 's0' ? ['baseline', 'ferretdb'] : ['gateway', 'registry', 'rollout', 'ferretdb']));
    }
    // The ratio is there whenever s0 held a rate; on a busy machine a smoke step may hold none.
    const s1 = result('s1');
    expect(s1.ratioToS0).toEqual(s1.s0.maxRate ? Math.round((s1.maxRate / s1.s0.maxRate) * 100) / 100 : null);
    expect(result('s4')).toMatchObject({ acceptedButNotStored: 0 });
    expect(result('s4').acceptedDevicesChecked).toBeGreaterThan(0);
    const storm = result('s6').storm;
    expect(storm.requests).toBeGreaterThan(result('s6').calm.requests);
    // Whatever a storm costs on a busy CI machine, it is never an internal error, and what the
    // gateway refuses carries Retry-After. (Zero failures of any kind is the full run's goal.)
    expect(Object.keys(storm.errors).filter((status) => status.startsWith('5') && status !== '503')).toEqual([]);
    expect(storm.shedWithRetryAfter).toBe((storm.errors['503'] ?? 0) + (storm.errors['429'] ?? 0));
    // The paused deployment was offered before the pause, and never after it.
    expect(result('s9').offersBeforePause).toBeGreaterThan(0);
    expect(result('s9').offersAfterPause).toBe(0);
    // The summary read back the counts the seeded reports left, alone and under load.
    expect(result('s11').sizes['200']).toMatchObject({ matchesSeeded: true, alone: { failures: [] }, underLoad: { failures: [] } });
    // Both download modes delivered every byte, the presigned one from object storage itself.
    expect(result('s12').modes).toMatchObject({
      gateway: { servedBy: 'gateway', wrongOrMissing: 0 },
      presigned: { servedBy: 'object storage', wrongOrMissing: 0 },
    });
    // Each way of making a store operation was measured, in this process's CPU.
    for (const cost of Object.values(result('s13').operations as Record<string, { oneAtATime: { cpuMsPerOperation: number }; inFlight16: { cpuMsPerOperation: number } }>)) {
      expect(cost.oneAtATime.cpuMsPerOperation).toBeGreaterThan(0);
      expect(cost.inFlight16.cpuMsPerOperation).toBeGreaterThan(0);
    }
    expect(Object.keys(result('s13').operations)).toEqual(['findOne', 'findCommand', 'updateOne', 'findOneAndUpdate', 'bucketRead', 'bucketRead in one batch', 'bucketRead as a command', 'findOne, commands monitored', 'findOneAndUpdate, commands monitored', 'bucketRead, commands monitored', 'bucketRead as a command, commands monitored']);
    // Each layout of a check's writes cost the store's processes CPU, read from /proc.
    const shapes = result('s14').shapes as Record<string, { storeCpuMsPerCheck: number; clientCpuMsPerCheck: number }>;
    expect(Object.keys(shapes)).toEqual(['objects', 'strings', 'none', 'records', 'records-ring', 'records-ring-unindexed', 'records-bare-device', 'records-small-device', 'records-unindexed', 's0']);
    for (const cost of Object.values(shapes)) expect(cost.storeCpuMsPerCheck).toBeGreaterThan(0);
    // The patch was made, verified and stored, smaller than the image, and its cost read from /proc.
    const patch = result('s15');
    expect(patch.patchBytes).toBeGreaterThan(0);
    expect(patch.ofImage).toBeLessThan(0.5);
    expect(patch.artifactsCpuSeconds).toBeGreaterThan(0);
    expect(patch.artifactsPeakMiB).toBeGreaterThanOrEqual(patch.artifactsIdleMiB);
    // The seeded fleet was seeded, and every operation around it answered without an error.
    const large = result('s16');
    expect(large).toMatchObject({ devices: 2000, createDeployment: { error: '' }, startDeployment: { error: '' } });
    expect(Object.keys(large.operations)).toHaveLength(19);
    // The preview's 256 parts held every seeded device once.
    expect(large.preview).toMatchObject({ parts: 256, devicesPreviewed: 2000 });
    // Both bulk changes ran to their end over the seeded group's devices, each audited once.
    expect(large.bulkChanges).toMatchObject({
      add: { state: 'done', devicesMatched: 200, changed: 200 },
      remove: { state: 'done', devicesMatched: 200, changed: 200 },
      auditEvents: 2,
    });
    // The floor ran its two processes, and is set against s1 of the same run.
    const floor = result('s17');
    expect(Object.keys(floor.steps[0].usage)).toEqual(expect.arrayContaining(['floor-front', 'floor-back', 'ferretdb']));
    // The start rate is the only step of a smoke run: s1 and the floor share it.
    expect(floor.atSameRates).toEqual([expect.objectContaining({ rate: result('s1').steps[0].rate, s1ServicesCpuMsPerCheck: expect.any(Number), floorCpuMsPerCheck: expect.any(Number) })]);
    // s0 ran before it, so the floor's highest rate is set against s0's too.
    expect(floor.ratioToS0).toEqual(s1.s0.maxRate ? Math.round((floor.maxRate / s1.s0.maxRate) * 100) / 100 : null);
    expect(Object.keys(floor.ratioToS0Bounds).sort()).toEqual(['high', 'low']);
    // s20 set our services and the floor side by side in each of its rounds, at the start rate.
    const inTurns = result('s20');
    expect(inTurns.rounds).toHaveLength(2);
    for (const round of inTurns.rounds) {
      expect(Object.keys(round.ours.usage)).toEqual(expect.arrayContaining(['gateway', 'registry']));
      expect(Object.keys(round.floor.usage)).toEqual(expect.arrayContaining(['floor-front', 'floor-back']));
      expect(round).toMatchObject({ oursCpuMsPerCheck: expect.any(Number), floorCpuMsPerCheck: expect.any(Number), servicesToFloor: expect.any(Number) });
    }
    expect(inTurns.rounds.map((round: { order: string[] }) => round.order)).toEqual([['ours', 'floor'], ['floor', 'ours']]);
    expect(inTurns.servicesToFloor).toEqual(expect.any(Number));
    // s22 served both sides in the same seconds and read each side's processes over them.
    const atOnce = result('s22');
    expect(atOnce.rounds).toHaveLength(2);
    for (const round of atOnce.rounds) {
      expect(Object.keys(round.ours.usage)).toEqual(expect.arrayContaining(['gateway', 'registry']));
      expect(Object.keys(round.floor.usage).sort()).toEqual(['floor-back', 'floor-front']);
      expect(round.ours.latency.requests).toBeGreaterThan(0);
      expect(round.floor.latency.requests).toBeGreaterThan(0);
      expect(Math.abs(round.ours.requests - round.floor.requests)).toBeLessThanOrEqual(1);
      expect(round).toMatchObject({ oursCpuMsPerCheck: expect.any(Number), floorCpuMsPerCheck: expect.any(Number), servicesToFloor: expect.any(Number) });
    }
    // The checks of seeded devices are answered, and the run says what a fleet of that size polling every 5 minutes costs.
    expect(large.checksOfKnownDevices).toMatchObject({ errorRate: 0, coresAtFiveMinutePolling: { gateway: expect.any(Number), registry: expect.any(Number) } });
    for (const [name, cost] of Object.entries(large.operations as Record<string, { calls: number; errors: string[] }>)) expect({ name, calls: cost.calls >= 3, errors: cost.errors }).toEqual({ name, calls: true, errors: [] });
    // Every device under the cap was registered and every one at the cap refused, the first checks
    // (which read the seeded places) too.
    const capped = result('s21');
    expect(capped).toMatchObject({ heldPlaces: 500, registrations: { cap: 5000, first: { error: '' }, errors: [] }, refusals: { cap: 500, first: { error: '' }, errors: [] } });
    for (const part of [capped.registrations, capped.refusals]) {
      expect(part.calls).toBeGreaterThanOrEqual(3);
      expect(Object.keys(part.cpuMsPerCall)).toEqual(expect.arrayContaining(['gateway', 'registry']));
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, HANG_GUARD_MS + 60_000);
