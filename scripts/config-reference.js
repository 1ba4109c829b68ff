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
  ['npm start (local stack)', 'libs/devstack/dist/start-settings', 'localStackSettings'],
];

function render() {
  const { describeConfig } = require(join(root, 'libs/config/dist'));
  const sections = SOURCES.map(([name, path, key]) => `## ${name}\n\n${describeConfig(require(join(root, path))[key])}\n`);
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
