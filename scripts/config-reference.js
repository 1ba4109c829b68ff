#!/usr/bin/env node
// Renders docs/configuration.md from the settings schemas the processes parse at start, so that
// the documented defaults are the real ones. `node scripts/config-reference.js --write` updates
// the file; a test fails when it is out of date.
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const SOURCES = [
  ['gateway', 'services/gateway/dist/config', 'gatewaySettings'],
  ['registry', 'services/registry/dist/config', 'registrySettings'],
  ['artifacts', 'services/artifacts/dist/config', 'artifactsSettings'],
  ['rollout', 'services/rollout/dist/config', 'rolloutSettings'],
  ['telemetry', 'services/telemetry/dist/config', 'telemetrySettings'],
  [
    'npm start (local stack)',
    'libs/devstack/dist/start-settings',
    'localStackSettings',
    [
      'How ports are chosen: with `LOCAL_STACK_PORTS=default`, each local server takes the port of its',
      'setting below, the services 50051-50054 and their metrics 9100-9104; with `random`, every one of',
      'them takes a free port. The gateway always serves on `GATEWAY_PORT`. Every port is checked before',
      'anything starts, and each server is checked to be the one answering on its port once it does: a',
      'port another program holds stops `npm start` with one line naming the port and the setting that',
      'moves it, and leaves nothing running, so the stack never goes on against a server it did not start.',
      'To use a MongoDB, NATS or S3 of your own on purpose, set `MONGODB_URI`, `NATS_URL` or `S3_ENDPOINT`.',
      'A second `npm start` on the same `LOCAL_STACK_DATA_DIR` is refused while the first runs.',
    ].join('\n'),
  ],
];

function render() {
  const { describeConfig } = require(join(root, 'libs/config/dist'));
  const sections = SOURCES.map(
    ([name, path, key, note]) => `## ${name}\n\n${note ? `${note}\n\n` : ''}${describeConfig(require(join(root, path))[key])}\n`,
  );
  return [
    '# Configuration',
    '',
    'Every process reads its settings from the environment once, at start, and refuses to start when one is',
    'invalid, naming the key. This file is generated from those schemas (`node scripts/config-reference.js',
    '--write`); a test fails when it is out of date.',
    '',
    ...sections,
  ].join('\n');
}

if (require.main === module) {
  const text = render();
  if (process.argv.includes('--write')) writeFileSync(join(root, 'docs', 'configuration.md'), text);
  else process.stdout.write(text);
}

module.exports = { render };
