// `npm run bench -- <scenario…|all> [--smoke] [--step-seconds N] [--devices N] [--out DIR]`
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchStack } from './bench-stack';
import { machine, updatePerformanceDoc, writeResult } from './report';
import { SCENARIOS, Scenarios, type ScenarioName } from './scenarios';

const rootDir = resolve(__dirname, '..', '..');
const ORDER = Object.keys(SCENARIOS) as ScenarioName[];

const USAGE = `usage: npm run bench -- <scenario...|all> [options]

Scenarios:
${ORDER.map((name) => `  ${name}  ${SCENARIOS[name]}`).join('\n')}

Options:
  --smoke            a short run of each step (CI): no rate search, small fleets, results to --out
  --step-seconds N   seconds per rate step (default 10; smoke 2)
  --devices N        known devices for s1 and s6 (default 50000; smoke 200)
  --offer-devices N  devices of the fleet with deployments (default 5000; smoke 200)
  --storm-seconds N  length of the s6 storm (default 60; smoke 3)
  --start-rate N     first rate of each search, per second (default 100; smoke 50)
  --out DIR          where results go (default bench/results; smoke: .data/bench/smoke-results)

A full run writes bench/results/<scenario>.json and the results table of docs/performance.md.`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      smoke: { type: 'boolean', default: false },
      'step-seconds': { type: 'string' },
      devices: { type: 'string' },
      'offer-devices': { type: 'string' },
      'storm-seconds': { type: 'string' },
      'start-rate': { type: 'string' },
      out: { type: 'string' },
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
  const settings = {
    smoke,
    stepMs: number(values['step-seconds'], smoke ? 2 : 10, 'step-seconds') * 1000,
    maxSteps: smoke ? 1 : 10,
    startRate: number(values['start-rate'], smoke ? 50 : 100, 'start-rate'),
    devices: number(values.devices, smoke ? 200 : 50_000, 'devices'),
    offerDevices: number(values['offer-devices'], smoke ? 200 : 5_000, 'offer-devices'),
    stormMs: number(values['storm-seconds'], smoke ? 3 : 60, 'storm-seconds') * 1000,
    log,
  };
  const out = resolve(values.out ?? (smoke ? join(rootDir, '.data', 'bench', 'smoke-results') : join(rootDir, 'bench', 'results')));

  const runId = `${Date.now().toString(36)}`;
  log(`starting the stack (${smoke ? 'smoke run' : 'full run'})`);
  const stack = await startBenchStack(rootDir, runId, {});
  const scenarios = new Scenarios(rootDir, stack, settings);
  try {
    // Always in the documented order, so that s6 and s9 can start from what s1 and s3 held.
    for (const name of ORDER.filter((scenario) => requested.includes(scenario))) {
      const started = Date.now();
      const result = await scenarios.run(name);
      const path = writeResult(out, name, {
        scenario: name,
        description: SCENARIOS[name],
        mode: smoke ? 'smoke' : 'full',
        date: new Date().toISOString(),
        seconds: Math.round((Date.now() - started) / 1000),
        machine: machine(),
        settings: { ...settings, log: undefined },
        ...result,
      });
      log(`${name} done in ${Math.round((Date.now() - started) / 1000)} s: ${path}`);
    }
    if (!smoke && !values.out) {
      updatePerformanceDoc(join(rootDir, 'docs', 'performance.md'), out);
      log('docs/performance.md results table updated');
    }
  } finally {
    await scenarios.close();
    await stack.stop();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
