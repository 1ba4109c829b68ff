#!/usr/bin/env node
// npm run soak:device [-- --runs N --delta-runs N --seed S]: the device SDK's interruption suites at
// soak size (1,000 seeded runs of full updates and 300 of delta updates by default) on a stack of
// their own, through jest's global setup like `npm test`. The seed is printed; the same seed repeats
// the same faults at the same bytes. Its server outages last up to two minutes (`--outage-max-s`),
// where `npm test`'s last up to 20 s.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const flag = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback;
};
const runs = flag('--runs', '1000');
const seed = flag('--seed', String(Math.floor(Math.random() * 2 ** 31)));
const deltaRuns = flag('--delta-runs', '300');
const outageMaxS = flag('--outage-max-s', '120');
const suites = ['device-sdk/test/device-e2e.int.test.ts', 'device-sdk/test/device-delta.int.test.ts'];
const result = spawnSync(join(root, 'node_modules', '.bin', 'jest'), [...suites, '--runInBand', '-t', 'interruptions|interrupted runs'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, OTA_DEVICE_INTERRUPTIONS: runs, OTA_DELTA_RUNS: deltaRuns, OTA_DEVICE_SEED: seed, OTA_DEVICE_OUTAGE_MAX_S: outageMaxS },
});
process.exit(result.status ?? 1);
