// `npm run bench -- <scenario…|all> [--smoke] [--step-seconds N] [--devices N] [--out DIR]`
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { RunningStack } from '@ota/devstack';
import { CHANGES, startBenchStack, type Variant } from './bench-stack';
import { machine, updatePerformanceDoc, writeResult } from './report';
import { SCENARIOS, Scenarios, type BenchSettings, type ScenarioName } from './scenarios';
import { Turns } from './turns';

const rootDir = resolve(__dirname, '..', '..');
const ORDER = Object.keys(SCENARIOS) as ScenarioName[];

const USAGE = `usage: npm run bench -- <scenario...|all> [options]

Scenarios:
${ORDER.map((name) => `  ${name}  ${SCENARIOS[name]}`).join('\n')}

Options:
  --smoke            a short run of each step (CI): no rate search, small fleets, results to --out
  --step-seconds N   seconds per rate step (default 10; smoke 2)
  --devices N        known devices for s1 and s6 (default 50000; smoke 200)
  --settled-checks N checks each device of the known and the offering fleet makes after its first,
                     before anything is measured (default 0); 19 gives each device the 20
                     decision records a settled device has
  --offer-devices N  devices of the fleet with deployments (default 5000; smoke 200)
  --summary-devices N,M
                     deployment sizes whose summary s11 reads (default 10000,100000; smoke 200)
  --download-devices N
                     devices downloading at once in s12 (default 200; smoke 20)
  --storm-seconds N  length of the s6 storm (default 60; smoke 3)
  --fleet-devices N  devices of the project s16 seeds (default 1000000; smoke 2000)
  --held-places N    device places each of s21's two owners holds (default 100000;
                     smoke 500)
  --reference-fleet-devices N
                     devices of the project on a second stack whose checks s16 measures beside
                     the large fleet's (default 50000; smoke 200)
  --start-rate N     first rate of each search, per second (default 100; smoke 50)
  --max-steps N      rate steps per search at most (default 10; smoke 1)
  --confirm-misses   run a rate step that missed once more at the same rate, and count the rate
                     as missed only when that one misses too (default off; the repeat counts
                     against --max-steps)
  --rounds N         rounds of s20, each one step of our services and one of the floor at
                     --start-rate, and of s22, each a step of both at once at --start-rate
                     each (default 6; smoke 2)
  --cpu-prof DIR     run every service, and s0's and s17's servers, with node --cpu-prof, writing
                     .cpuprofile files to DIR
  --alloc-prof DIR   sample what every service, and s0's and s17's servers, allocate (freed or
                     not) from start to exit, writing .heapprofile files to DIR; read them with
                     node bench/dist/allocation-shares.js DIR
  --service-node-args "ARGS"
                     more Node.js arguments for every service, after the heap the chart gives it
                     (libs/devstack/src/service-heaps.ts), e.g. "--max-semi-space-size=16"
  --out DIR          where results go (default bench/results; smoke: .data/bench/smoke-results)
  --compare-without CHANGE
                     run the scenarios on two stacks in this one run, CHANGE switched off and on,
                     taking turns step by step, and write <out>/compare-CHANGE.json with both and
                     their ratios.
                     CHANGE: ${Object.keys(CHANGES).join(', ')}
  --compare-with-commit REV
                     the same, with the "without" stack built from commit REV (a git worktree
                     under .data/bench/worktrees, built by its own scripts/ensure-built.mjs):
                     writes <out>/compare-REV.json

A full run writes bench/results/<scenario>.json and the results table of docs/performance.md.`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      smoke: { type: 'boolean', default: false },
      'step-seconds': { type: 'string' },
      devices: { type: 'string' },
      'settled-checks': { type: 'string' },
      'offer-devices': { type: 'string' },
      'download-devices': { type: 'string' },
      'summary-devices': { type: 'string' },
      'storm-seconds': { type: 'string' },
      'fleet-devices': { type: 'string' },
      'reference-fleet-devices': { type: 'string' },
      'held-places': { type: 'string' },
      'start-rate': { type: 'string' },
      out: { type: 'string' },
      'compare-without': { type: 'string' },
      'compare-with-commit': { type: 'string' },
      'max-steps': { type: 'string' },
      'confirm-misses': { type: 'boolean', default: false },
      rounds: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'alloc-prof': { type: 'string' },
      'service-node-args': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const requested = positionals.includes('all') ? ORDER : (positionals as ScenarioName[]);
  const unknown = requested.filter((name) => !ORDER.includes(name));
  if (values.help || requested.length === 0 || unknown.length > 0) {
    throw new Error(`${unknown.length ? `unknown scenario: ${unknown.join(', ')}\n\n` : ''}${USAGE}`);
  }
  const smoke = values.smoke!;
  const number = (value: string | undefined, fallback: number, name: string) => {
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`--${name} takes a whole number above 0`);
    return Number(value);
  };
  const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
  const settings: BenchSettings = {
    smoke,
    stepMs: number(values['step-seconds'], smoke ? 2 : 10, 'step-seconds') * 1000,
    maxSteps: number(values['max-steps'], smoke ? 1 : 10, 'max-steps'),
    confirmMisses: values['confirm-misses']!,
    startRate: number(values['start-rate'], smoke ? 50 : 100, 'start-rate'),
    devices: number(values.devices, smoke ? 200 : 50_000, 'devices'),
    settledChecks: values['settled-checks'] === '0' ? 0 : number(values['settled-checks'], 0, 'settled-checks'),
    offerDevices: number(values['offer-devices'], smoke ? 200 : 5_000, 'offer-devices'),
    downloadDevices: number(values['download-devices'], smoke ? 20 : 200, 'download-devices'),
    summaryDevices: (values['summary-devices'] ?? (smoke ? '200' : '10000,100000')).split(',').map((size) => number(size, 0, 'summary-devices')),
    stormMs: number(values['storm-seconds'], smoke ? 3 : 60, 'storm-seconds') * 1000,
    fleetDevices: number(values['fleet-devices'], smoke ? 2_000 : 1_000_000, 'fleet-devices'),
    heldPlaces: number(values['held-places'], smoke ? 500 : 100_000, 'held-places'),
    referenceFleetDevices: number(values['reference-fleet-devices'], smoke ? 200 : 50_000, 'reference-fleet-devices'),
    rounds: number(values.rounds, smoke ? 2 : 6, 'rounds'),
    log,
  };
  const out = resolve(values.out ?? (smoke ? join(rootDir, '.data', 'bench', 'smoke-results') : join(rootDir, 'bench', 'results')));

  const compare = values['compare-without'];
  if (compare !== undefined && !CHANGES[compare]) throw new Error(`--compare-without takes one of: ${Object.keys(CHANGES).join(', ')}`);
  // A comparison runs both sides as they are; their difference is the change's, not the arguments'.
  if ((compare !== undefined || values['compare-with-commit']) && (values['service-node-args'] || values['cpu-prof'] || values['alloc-prof'])) throw new Error('--service-node-args, --cpu-prof and --alloc-prof are for a run of this checkout alone, not a comparison');
  const selected = ORDER.filter((scenario) => requested.includes(scenario));
  const record = (name: ScenarioName, result: object, extra: object = {}) => ({
    scenario: name,
    description: SCENARIOS[name],
    mode: smoke ? 'smoke' : 'full',
    date: new Date().toISOString(),
    machine: machine(),
    settings: { ...settings, log: undefined, beforeStep: undefined },
    ...extra,
    ...result,
  });

  const comparison = async (name: string, description: string, baseline: Variant, baselineLabel: string) => {
    log(`comparing ${baselineLabel} with this checkout: ${description}`);
    log('both stacks run at once and take turns: one scenario, one step of a rate search, or one of s16’s operations at a time, alternating');
    // Side by side in time, not one half after the other: a machine that slows down part way
    // through slows both sides alike.
    const turns = new Turns();
    const side = (label: string): BenchSettings => ({ ...settings, log: (message) => log(`${label} | ${message}`), beforeStep: () => turns.pass() });
    const [without, withChange] = await Promise.all([
      runOnStack(selected, side(baselineLabel), baseline, baselineLabel, turns),
      runOnStack(selected, side('this checkout'), {}, 'this checkout', turns),
    ]);
    const result = {
      change: name,
      description,
      date: new Date().toISOString(),
      machine: machine(),
      scenarios: Object.fromEntries(
        selected.map((scenario) => {
          const [off, on] = [without.get(scenario) as Record<string, any>, withChange.get(scenario) as Record<string, any>];
          const ratio = off.maxRate ? Math.round((on.maxRate / off.maxRate) * 100) / 100 : null;
          return [scenario, { without: record(scenario, off), with: record(scenario, on), maxRateRatio: ratio }];
        }),
      ),
    };
    log(`written: ${writeResult(out, `compare-${name}`, result)}`);
  };
  if (compare) return comparison(compare, CHANGES[compare]!.description, CHANGES[compare]!.off, `without ${compare}`);
  const baseCommit = values['compare-with-commit'];
  if (baseCommit) {
    const tree = checkoutCommit(baseCommit, log);
    return comparison(baseCommit, `this checkout (${machine().commit}) against commit ${baseCommit}`, { rootDir: tree }, `commit ${baseCommit}`);
  }

  const allocationProfileDir = values['alloc-prof'] && resolve(values['alloc-prof']);
  if (allocationProfileDir) {
    mkdirSync(allocationProfileDir, { recursive: true });
    // The services and the bench's servers inherit the bench's environment.
    process.env.OTA_ALLOCATION_PROFILE_DIR = allocationProfileDir;
  }
  const variant: Variant = {
    serviceNodeArgs: [
      ...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof'])}`] : []),
      ...(allocationProfileDir ? [`--require=${join(rootDir, 'bench', 'dist', 'allocation-sampler.js')}`] : []),
      ...(values['service-node-args']?.split(/\s+/).filter(Boolean) ?? []),
    ],
  };
  const results = await runOnStack(selected, settings, variant, 'default stack');
  for (const [name, result] of results) log(`${name}: ${writeResult(out, name, record(name, result))}`);
  if (!smoke && !values.out) {
    updatePerformanceDoc(join(rootDir, 'docs', 'performance.md'), out);
    log('docs/performance.md results table updated');
  }
}

/**
 * Starts a stack of the given variant, runs the scenarios in the documented order, stops it. With
 * `turns`, it runs only while it holds the turn, and passes it before each scenario (and, through
 * settings.beforeStep, before each step of a rate search).
 */
async function runOnStack(selected: ScenarioName[], settings: BenchSettings, variant: Variant, label: string, turns?: Turns): Promise<Map<ScenarioName, object>> {
  await turns?.take();
  try {
    return await runScenarios(selected, settings, variant, label, turns);
  } finally {
    turns?.release();
  }
}

async function runScenarios(selected: ScenarioName[], settings: BenchSettings, variant: Variant, label: string, turns: Turns | undefined): Promise<Map<ScenarioName, object>> {
  settings.log(`starting the stack (${label}${settings.smoke ? ', smoke run' : ''})`);
  const tree = variant.rootDir ?? rootDir;
  const stack = await startBenchStack(tree, `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`, variant);
  const scenarios = new Scenarios(tree, stack, settings, variant.serviceNodeArgs);
  runningStacks.add(stack);
  const results = new Map<ScenarioName, object>();
  try {
    // s6 and s9 start from what s1 and s3 held, so the order is fixed.
    for (const name of selected) {
      await turns?.pass();
      const started = Date.now();
      results.set(name, { ...(await scenarios.run(name)), seconds: Math.round((Date.now() - started) / 1000) });
      settings.log(`${name} done in ${Math.round((Date.now() - started) / 1000)} s`);
    }
  } finally {
    runningStacks.delete(stack);
    await scenarios.close();
    await stack.stop();
  }
  return results;
}

/** A worktree of `rev`, built as a fresh clone would build itself; reused when it is already at `rev`. */
function checkoutCommit(rev: string, log: (message: string) => void): string {
  const git = (args: string[], cwd = rootDir) => {
    const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout.trim();
  };
  const commit = git(['rev-parse', '--verify', `${rev}^{commit}`]);
  const tree = join(rootDir, '.data', 'bench', 'worktrees', commit.slice(0, 12));
  if (!existsSync(join(tree, '.git'))) {
    log(`checking out ${commit.slice(0, 12)} into ${tree}`);
    git(['worktree', 'add', '--detach', '--force', tree, commit]);
  }
  log(`building ${commit.slice(0, 12)} (scripts/ensure-built.mjs)`);
  const built = spawnSync(process.execPath, ['scripts/ensure-built.mjs'], { cwd: tree, stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) throw new Error(`building ${rev} failed`);
  return tree;
}

// Ctrl-C stops the stacks this run started (both sides of a comparison) instead of leaving them behind.
const runningStacks = new Set<RunningStack>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`[bench] ${signal}: stopping ${runningStacks.size} stack(s)\n`);
    void Promise.allSettled([...runningStacks].map((stack) => stack.stop())).then(() => process.exit(130));
  });
}

main().catch(async (error: Error) => {
  // The stack says where a failure came from; a bare message (a refused connection, a timeout) does not.
  process.stderr.write(`${error.stack ?? error.message}\n`);
  // One side of a comparison failed: the other side's stack stops with it.
  await Promise.allSettled([...runningStacks].map((stack) => stack.stop()));
  process.exit(1);
});
