import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// Rollout started with a cache of device statuses its heap could not hold when full refuses to
// start, saying what the cache needs and what to change, before it reaches for any server: the
// process would otherwise run out of heap only once the cache filled, under load.

const main = join(__dirname, '..', 'dist', 'main.js');

it('refuses to start when DEVICE_STATUS_CACHE_ENTRIES would not fit in its heap', () => {
  const started = spawnSync(process.execPath, ['--max-old-space-size=384', '--max-semi-space-size=8', main], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'error' },
  });
  expect(started.status).not.toBe(0);
  expect(`${started.stdout}${started.stderr}`).toContain("DEVICE_STATUS_CACHE_ENTRIES=500000 would take 301 MiB of heap when full (about 630 B an entry), and rollout needs 160 MiB besides: 461 MiB, more than this process's heap of 408 MiB");
});
