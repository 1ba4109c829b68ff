#!/usr/bin/env node
// `npm run test:fuzz`: schemathesis against the gateway's own OpenAPI document, on a stack of its
// own with real data, so that path ids name real objects and the fuzzer reaches past the 404s.
// Every operation is run through schemathesis' examples, coverage and fuzzing phases with a
// bounded number of cases each; the run fails on any 5xx or any answer the document does not allow.
//
// Settings (environment): FUZZ_MAX_EXAMPLES (cases per operation and phase, default 50),
// FUZZ_SEED (default 20261122, so that a run can be repeated), OTA_KEEP_TEST_DATA=1 keeps the
// stack's data and logs.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fuzzVenv } from './ensure-built.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { startStack, throwawayStack } = require(join(root, 'libs', 'devstack', 'dist', 'index.js'));

const MAX_EXAMPLES = process.env.FUZZ_MAX_EXAMPLES ?? '50';
const SEED = process.env.FUZZ_SEED ?? '20261122';
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance'];

function say(message) {
  process.stderr.write(`[fuzz] ${message}\n`);
}

/**
 * Schemathesis closes its report the way pytest does ("=== 3 warnings in 79s ==="), and CI reads
 * such a line as a pytest run that executed no test; prefixed, its lines read as what they are.
 */
function prefixLines(from, to) {
  createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => to.write(`[schemathesis] ${line}\n`));
}

async function call(gatewayUrl, method, path, token, body) {
  const headers = { authorization: `Bearer ${token}` };
  let payload = body;
  if (body !== undefined && !(body instanceof FormData)) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const response = await fetch(`${gatewayUrl}/api/v1${path}`, { method, headers, body: payload });
  const answer = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

function uploadForm(versionLabel) {
  const form = new FormData();
  form.append('manifest', JSON.stringify({ version_label: versionLabel, framework: 'esp_idf', chip_family: 'esp32' }));
  form.append('binary', new Blob([randomBytes(4096)]), 'firmware.bin');
  return form;
}

/** A user with one of everything, so that every path parameter can name a real object. */
async function seed(stack) {
  const admin = spawnSync(process.execPath, [join(root, 'services', 'gateway', 'dist', 'admin', 'cli.js'), 'create-user', '--email', 'fuzz@example.com', '--staff', '--max-devices', '0', '--max-uploads-per-month', '0'], {
    env: { ...stack.gatewayEnv, PATH: process.env.PATH },
    encoding: 'utf8',
  });
  if (admin.status !== 0) throw new Error(`create-user failed: ${admin.stderr}`);
  const pat = JSON.parse(admin.stdout).token;
  const url = stack.gatewayUrl;
  const project = await call(url, 'POST', '/projects/', pat, { name: 'fuzzing' });
  const p = `/projects/${project.id}`;
  const fleet = await call(url, 'POST', `${p}/tokens/`, pat, { name: 'fleet', scope: 'device' });
  const spareToken = await call(url, 'POST', `${p}/tokens/`, pat, { name: 'spare', scope: 'api', role: 'admin' });
  const sparePat = await call(url, 'POST', '/me/tokens/', pat, { name: 'spare' });
  const device = await call(url, 'POST', `${p}/devices/`, pat, { device_id: 'fuzz-device' });
  const group = await call(url, 'POST', `${p}/groups/`, pat, { name: 'fuzz-group' });
  await call(url, 'POST', `${p}/groups/${group.id}/members/`, pat, { device_id: device.id });
  const { publicKey } = generateKeyPairSync('ed25519');
  const key = await call(url, 'POST', `${p}/signing-keys/`, pat, { name: 'fuzz-key', public_key: publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64') });
  // An active deployment keeps the project from being deleted while the fuzzer runs (409).
  const release = await call(url, 'POST', `${p}/release/`, pat, uploadForm('fuzz-1'));
  const offer = await call(url, 'POST', '/ota/check/', fleet.token, { device_id: 'fuzz-fleet-device', framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 });
  if (!offer.update_available) throw new Error(`the seeded device was not offered the seeded build: ${JSON.stringify(offer)}`);
  // Objects that deleting operations may take away without leaving the rest of the run with 404s.
  const spareProject = await call(url, 'POST', '/projects/', pat, { name: 'fuzzing-spare' });
  const spareDevice = await call(url, 'POST', `${p}/devices/`, pat, { device_id: 'fuzz-spare-device' });
  const spareKey = await call(url, 'POST', `${p}/signing-keys/`, pat, { name: 'fuzz-spare-key', public_key: generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64') });
  return {
    pat,
    fleetToken: fleet.token,
    projectId: project.id,
    deviceUuid: device.id,
    groupId: group.id,
    keyId: key.id,
    artifactId: release.artifact_id,
    deploymentId: release.deployment_id,
    spareTokenId: spareToken.id,
    sparePatId: sparePat.id,
    spareProjectId: spareProject.id,
    spareDeviceUuid: spareDevice.id,
    spareKeyId: spareKey.id,
    download: new URL(offer.url ?? 'http://missing/', url).searchParams,
  };
}

function configOf(ids) {
  const toml = (value) => JSON.stringify(value);
  return `# Written by scripts/fuzz.mjs for one run.
headers = { Authorization = ${toml(`Bearer ${ids.pat}`)} }
request-timeout = 30

[generation]
max-examples = ${Number(MAX_EXAMPLES)}

[parameters]
"path.id" = ${toml(ids.projectId)}
"path.aid" = ${toml(ids.artifactId)}
"path.artifactId" = ${toml(ids.artifactId)}
"path.gid" = ${toml(ids.groupId)}
"path.key_id" = ${toml(ids.keyId)}

[[operations]]
include-operation-id = ["getDevice", "updateDevice", "issueDeviceToken", "revokeDeviceToken", "listCheckEvents", "removeGroupMember"]
parameters = { "path.did" = ${toml(ids.deviceUuid)} }

[[operations]]
include-operation-id = "deleteDevice"
parameters = { "path.did" = ${toml(ids.spareDeviceUuid)} }

[[operations]]
include-operation-id = ["getDeployment", "transitionDeployment", "listDeviceStates"]
parameters = { "path.did" = ${toml(ids.deploymentId)} }

[[operations]]
include-operation-id = "deleteProject"
parameters = { "path.id" = ${toml(ids.spareProjectId)} }

[[operations]]
include-operation-id = "deleteSigningKey"
parameters = { "path.key_id" = ${toml(ids.spareKeyId)} }

[[operations]]
include-operation-id = "revokeProjectToken"
parameters = { "path.tid" = ${toml(ids.spareTokenId)} }

[[operations]]
include-operation-id = "revokePersonalToken"
parameters = { "path.tid" = ${toml(ids.sparePatId)} }

[[operations]]
include-operation-id = "downloadArtifact"
parameters = { "query.size" = ${toml(ids.download.get('size'))}, "query.expires" = ${toml(ids.download.get('expires'))}, "query.signature" = ${toml(ids.download.get('signature'))} }

[[operations]]
include-operation-id = ["checkForUpdate", "reportStatus"]
headers = { Authorization = ${toml(`Bearer ${ids.fleetToken}`)} }
`;
}

async function main() {
  // The fuzzer is one client sending as fast as it can: the per-token limit would only make it wait.
  const { dataDir, logDir, options } = throwawayStack(root, 'fuzz', { LOG_LEVEL: 'info', RATE_LIMIT_DEVELOPER_PER_SECOND: '0', RATE_LIMIT_FLEET_TOKEN_PER_SECOND: '0' });
  say(`starting a stack of its own (logs in ${logDir})`);
  const stack = await startStack(options);
  let status = 1;
  try {
    const ids = await seed(stack);
    const configFile = join(dataDir, 'schemathesis.toml');
    writeFileSync(configFile, configOf(ids));
    const args = [
      '--config-file', configFile,
      'run', `${stack.gatewayUrl}/api/v1/openapi.json`,
      '--url', stack.gatewayUrl,
      '--checks', CHECKS.join(','),
      '--phases', 'examples,coverage,fuzzing',
      '--seed', SEED,
      '--workers', '1',
      '--no-color',
      '--report', 'junit',
      '--report-dir', join(dataDir, 'report'),
    ];
    say(`schemathesis: every operation, up to ${MAX_EXAMPLES} cases per phase, seed ${SEED}, checks ${CHECKS.join(', ')}`);
    const child = spawn(join(fuzzVenv, 'bin', 'st'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    prefixLines(child.stdout, process.stdout);
    prefixLines(child.stderr, process.stderr);
    status = await new Promise((resolve) => child.once('close', (code) => resolve(code ?? 1)));
    const survived = await fetch(`${stack.gatewayUrl}/api/v1/projects/${ids.projectId}/`, { headers: { authorization: `Bearer ${ids.pat}` } });
    say(`the seeded project after the run: ${survived.status}; the spare project: ${(await fetch(`${stack.gatewayUrl}/api/v1/projects/${ids.spareProjectId}/`, { headers: { authorization: `Bearer ${ids.pat}` } })).status}`);
  } finally {
    await stack.stop();
    if (status === 0 && process.env.OTA_KEEP_TEST_DATA !== '1') rmSync(dataDir, { recursive: true, force: true });
    else say(`data and logs kept in ${dataDir}`);
  }
  say(status === 0 ? 'passed: no 5xx, every answer as the OpenAPI document describes' : `failed (schemathesis exit code ${status})`);
  process.exit(status);
}

main().catch((error) => {
  say(`failed: ${error.stack ?? error.message}`);
  process.exit(1);
});
