import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// A service started outside the local stack with a secret left at its development default (which
// anyone can read in the source) refuses to start, saying which and what to do (docs/security.md,
// "Secrets"); the local stack allows it with ALLOW_DEVELOPMENT_SECRETS.

const root = join(__dirname, '..', '..', '..');
const start = (service: string, env: Record<string, string>) =>
  spawnSync(process.execPath, [join(root, 'services', service, 'dist', 'main.js')], { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH ?? '', ...env } });

it.each([
  ['gateway', 'OTA_URL_SIGNING_KEY'],
  ['telemetry', 'WEBHOOK_SECRET_KEYS'],
])('%s refuses to start with %s at its development default', (service, key) => {
  const started = start(service, { LOG_LEVEL: 'error' });
  expect(started.status).not.toBe(0);
  expect(`${started.stdout}${started.stderr}`).toContain(`${key} is the development default`);
  expect(`${started.stdout}${started.stderr}`).toContain('ALLOW_DEVELOPMENT_SECRETS=true');
});
