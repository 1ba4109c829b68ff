import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, makeEspBuild, makeEspImage, makeEspSbom, randomBinary, setupProject, testStack, type ProjectFixture } from '@ota/testkit';
import { fleetInGroup, fleetUpdates } from './fleet';
import { runProcess, type Run } from './run-process';

// otactl run as a child process, the way a pipeline runs it (the one-file bundle, settings in the
// environment), against the real stack, with the test playing the fleet (docs/ci.md).

const BUNDLE = join(__dirname, '..', 'dist', 'otactl.cjs');
const work = mkdtempSync(join(tmpdir(), 'otactl-'));

async function otactl(f: ProjectFixture, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const run = await runProcess(process.execPath, [BUNDLE, ...args], { env: { PATH: process.env.PATH, OTA_URL: testStack().gatewayUrl, OTA_TOKEN: f.apiToken, ...env } });
  // The token is a secret: nothing otactl prints may hold it.
  expect(run.stdout + run.stderr).not.toContain(f.apiToken);
  return run;
}

function build(name: string, bytes = 4096): string {
  const path = join(work, `${name}.bin`);
  writeFileSync(path, randomBinary(bytes));
  return path;
}

const MANIFEST_FLAGS = ['--version', '2.0.0', '--chip-family', 'esp32'];

test('a release the canary confirms exits 0; one whose guardrail trips exits 2 with the reason and the console link', async () => {
  const f = await setupProject();
  const canary = ['c-1', 'c-2', 'c-3'];
  await fleetInGroup(f, 'canary', canary);
  const good = otactl(f, ['release', '--binary', build('good'), ...MANIFEST_FLAGS, '--group', 'canary', '--failure-threshold', '50:2', '--wait', '--until', 'confirmed:100%', '--timeout', '60s', '--interval', '1s']);
  await fleetUpdates(f, 1, canary, [{ event: 'downloaded' }, { event: 'flashed' }, { event: 'confirmed' }]);
  const passed = await good;
  expect(passed.code).toBe(0);
  expect(passed.stdout).toContain('met: 100% of targeted devices confirmed');
  expect(passed.stderr).toContain('uploaded build 1 (2.0.0)');
  // Without a terminal the progress comes a line per change.
  expect(passed.stderr).toMatch(/build 1 active at 100% · \d of 3 updated/);

  const badBuild = build('bad');
  const badFlags = ['--binary', badBuild, '--version', '2.0.1', '--chip-family', 'esp32', '--group', 'canary', '--reason-limit', 'signature_invalid:2:10m'];
  const bad = otactl(f, ['release', ...badFlags, '--run-id', 'run-1', '--wait', '--timeout', '60s', '--interval', '1s']);
  await fleetUpdates(f, 2, canary.slice(0, 2), [{ event: 'download_started' }, { event: 'failed', reason: 'signature_invalid' }]);
  const failed = await bad;
  expect(failed.code).toBe(2);
  expect(failed.stdout).toContain('paused by the reason limit: 2 failures with reason signature_invalid within 600 s (limit 2)');
  expect(failed.stdout).toMatch(new RegExp(`console: ${testStack().gatewayUrl}/console/projects/${f.project.id}/deployments/[0-9a-f-]{36}`));

  // The next run of the pipeline does not roll the held build out again beside the paused one.
  const deploymentsOfBad = async () =>
    ((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token })).body as Array<{ build_number: number; state: string }>).filter((deployment) => deployment.build_number === 2);
  const again = await otactl(f, ['release', ...badFlags, '--run-id', 'run-2']);
  expect(again.code).toBe(2);
  expect(again.stdout).toMatch(/build 2 is held: deployment [0-9a-f-]{36} was paused by its reason_limit guardrail/);
  expect(again.stdout).toContain('--despite-holds');
  expect((await deploymentsOfBad()).map((deployment) => deployment.state)).toEqual(['paused']);
  // Asked for explicitly, it is.
  const despite = await otactl(f, ['release', ...badFlags, '--run-id', 'run-2', '--despite-holds']);
  expect(despite.code).toBe(0);
  expect((await deploymentsOfBad()).map((deployment) => deployment.state).sort()).toEqual(['active', 'paused']);
}, 180_000);

test('wait exits 3 at its timeout, a refused manifest exits 4 with the detail, and a usage mistake exits 1', async () => {
  const f = await setupProject();
  await fleetInGroup(f, 'canary', ['t-1']);
  const released = await otactl(f, ['--json', 'release', '--binary', build('slow'), ...MANIFEST_FLAGS, '--group', 'canary']);
  expect(released.code).toBe(0);
  const { deployment } = JSON.parse(released.stdout);
  const waited = await otactl(f, ['wait', deployment.id, '--timeout', '2s', '--interval', '1s']);
  expect(waited.code).toBe(3);
  expect(waited.stdout).toContain('timed out after 2 s');

  const refused = await otactl(f, ['release', '--binary', build('refused'), '--version', '1', '--framework', 'zephyr', '--chip-family', 'esp32', '--group', 'canary']);
  expect(refused.code).toBe(4);
  expect(refused.stderr).toMatch(/refused \(400\): .*framework/);
  const unknownGroup = await otactl(f, ['release', '--binary', build('nogroup'), ...MANIFEST_FLAGS, '--group', 'nowhere']);
  expect(unknownGroup.code).toBe(4);
  expect(unknownGroup.stderr).toContain('no group named "nowhere"');
  expect((await otactl(f, ['release', '--binary', build('both'), ...MANIFEST_FLAGS, '--group', 'canary', '--percentage', '5', '--stages', '5,50'])).code).toBe(1);
  expect((await otactl(f, ['wait', deployment.id, '--until', 'half'])).stderr).toContain('--until must be');
  expect((await otactl(f, ['projects', 'list'], { OTA_TOKEN: '' })).code).toBe(1);
}, 120_000);

/**
 * A loopback stand-in for a gateway having a bad moment, in front of the real one: the first
 * `failures` requests are answered 503 with Retry-After 1 (or 429, alternately), the rest
 * forwarded; with `silent`, no request is ever answered.
 */
async function flakyGateway(options: { failures: number; silent?: boolean }): Promise<{ url: string; refused: () => number; close: () => Promise<void> }> {
  let refused = 0;
  const target = new URL(testStack().gatewayUrl);
  const server = http.createServer((request, response) => {
    if (options.silent) return;
    if (refused < options.failures) {
      refused += 1;
      const status = refused % 2 === 0 ? 429 : 503;
      response.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"detail":"busy"}');
      return;
    }
    const forwarded = http.request({ host: target.hostname, port: target.port, path: request.url, method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused: () => refused,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test('wait rides out 503s and 429s within its timeout, and its timeout holds against a gateway that stops answering', async () => {
  const f = await setupProject();
  await fleetInGroup(f, 'canary', ['w-1']);
  const released = await otactl(f, ['--json', 'release', '--binary', build('flaky'), ...MANIFEST_FLAGS, '--group', 'canary']);
  const { deployment } = JSON.parse(released.stdout);
  const path = `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/transition/`;
  expect((await api('POST', path, { token: f.user.token, json: { action: 'complete' } })).status).toBe(200);

  const flaky = await flakyGateway({ failures: 4 });
  try {
    const waited = await otactl(f, ['wait', deployment.id, '--project', f.project.id, '--timeout', '60s', '--interval', '1s'], { OTA_URL: flaky.url });
    expect({ code: waited.code, stderr: waited.stderr }).toMatchObject({ code: 0 });
    expect(flaky.refused()).toBe(4);
    expect(waited.stderr).toMatch(/not answered \((503|429) busy\); trying again/);
  } finally {
    await flaky.close();
  }

  const silent = await flakyGateway({ failures: 0, silent: true });
  try {
    // Bounded here, so that a wait that never ends fails the test instead of hanging it.
    const waited = await Promise.race([
      otactl(f, ['wait', deployment.id, '--project', f.project.id, '--timeout', '3s', '--interval', '1s'], { OTA_URL: silent.url }),
      new Promise<Run>((resolve) => setTimeout(() => resolve({ code: -1, stdout: '', stderr: 'still waiting after 60 s' }), 60_000).unref()),
    ]);
    expect({ code: waited.code, stdout: waited.stdout }).toMatchObject({ code: 3 });
    expect(waited.stdout).toContain('timed out after 3 s');
  } finally {
    await silent.close();
  }
}, 120_000);

test('release checks every flag and target before it uploads: a refused release leaves no build behind', async () => {
  const f = await setupProject();
  await fleetInGroup(f, 'canary', ['r-1']);
  const builds = async () => (await api('GET', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token })).body.length as number;
  const before = await builds();
  const mistakes: Array<[string[], number, RegExp]> = [
    [['--group', 'canary', '--failure-threshold', 'half'], 1, /--failure-threshold is PERCENT:MIN_FINISHED/],
    [['--group', 'canary', '--percentage', '5', '--stages', '5,50'], 1, /not both/],
    [['--group', 'nowhere'], 4, /no group named "nowhere"/],
    [[], 1, /name the targets/],
    [['--group', 'canary', '--reason-limit', 'x'], 1, /--reason-limit is REASON:COUNT:WINDOW/],
    [['--group', 'canary', '--window', 'saturday@01:30+3h'], 1, /--window is DAYS@HH:MM\+DURATION/],
    [['--group', 'canary', '--window', 'sat@01:30+3h', '--window-zone', 'Mars/Olympus_Mons'], 1, /--window-zone Mars\/Olympus_Mons is not a time zone/],
    [['--group', 'canary', '--health-margin', 'lots'], 1, /--health-margin/],
    [['--group', 'canary', '--max-offers-per-minute', '0'], 1, /--max-offers-per-minute/],
    [['--group', 'canary', '--health-significance', '0.5'], 1, /--health-significance takes a number above 0 and at most 0.1/],
  ];
  for (const [index, [flags, code, message]] of mistakes.entries()) {
    const run = await otactl(f, ['release', '--binary', build(`mistake-${index}`), ...MANIFEST_FLAGS, ...flags]);
    expect({ flags, code: run.code }).toEqual({ flags, code });
    expect(run.stderr).toMatch(message);
  }
  expect(await builds()).toBe(before);

  // A release in maintenance windows, watching device health, carries both to its deployment.
  const windowed = await otactl(f, [
    'release',
    '--binary',
    build('windowed'),
    ...MANIFEST_FLAGS,
    '--group',
    'canary',
    '--window',
    'sat,sun@01:30+3h',
    '--window',
    'wed@22:00+45m',
    '--window-zone',
    'Europe/Berlin',
    '--health-margin',
    '80',
    '--health-min-hours',
    '120',
    '--max-offers-per-minute',
    '500',
    '--max-in-progress',
    '50',
  ]);
  expect(windowed.code).toBe(0);
  const [deployment] = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token })).body;
  expect(deployment.guardrails.health_regression).toEqual({ margin_percent: 80, significance: 0.001, min_devices: 20, min_device_hours: 120 });
  expect(deployment.caps).toEqual({ offers_per_minute: 500, max_in_progress: 50 });
  expect(deployment.maintenance_windows).toEqual({
    time_zone: 'Europe/Berlin',
    in_device_local_time: false,
    windows: [
      { days: ['sat', 'sun'], start: '01:30', duration_minutes: 180 },
      { days: ['wed'], start: '22:00', duration_minutes: 45 },
    ],
  });
}, 120_000);

test('runs as the docs say from a clone: `npx otactl` finds the workspace command once it is built', async () => {
  const root = join(__dirname, '..', '..', '..');
  // --no-install: never a package of that name from a registry.
  const run = await runProcess('npx', ['--no-install', 'otactl', '--version'], { cwd: root, env: { PATH: process.env.PATH } });
  expect(run).toMatchObject({ code: 0, stdout: 'otactl 0.1.0\n' });
});

test('eight parallel releases of the same build make one artifact and one deployment, and every run gets the same answer', async () => {
  const f = await setupProject();
  await fleetInGroup(f, 'canary', ['p-1']);
  const binary = build('parallel', 300_000);
  const runs = await Promise.all(Array.from({ length: 8 }, () => otactl(f, ['--json', 'release', '--binary', binary, ...MANIFEST_FLAGS, '--group', 'canary', '--percentage', '10', '--run-id', 'pipeline-41'])));
  expect(runs.map((run) => run.code)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  const answers = runs.map((run) => JSON.parse(run.stdout) as { artifact: { id: string }; deployment: { id: string; state: string } });
  expect(new Set(answers.map((answer) => answer.artifact.id)).size).toBe(1);
  expect(new Set(answers.map((answer) => answer.deployment.id)).size).toBe(1);
  expect(answers.every((answer) => answer.deployment.state === 'active')).toBe(true);
  expect((await api('GET', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.apiToken })).body).toHaveLength(1);
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.apiToken })).body).toHaveLength(1);
}, 120_000);

test('the other commands: deployments, artifacts with prune, devices, projects, in tables and in JSON', async () => {
  const f = await setupProject();
  await fleetInGroup(f, 'canary', ['d-1', 'd-2']);
  for (const version of ['1.0.0', '1.1.0', '1.2.0', '1.3.0']) expect((await otactl(f, ['artifacts', 'upload', '--binary', build(version), '--version', version, '--chip-family', 'esp32'])).code).toBe(0);
  const released = JSON.parse((await otactl(f, ['--json', 'release', '--binary', build('1.4.0'), '--version', '1.4.0', '--chip-family', 'esp32', '--group', 'canary', '--percentage', '20'])).stdout);

  const listed = await otactl(f, ['deployments', 'list']);
  expect(listed.stdout).toMatch(/BUILD\s+VERSION\s+STATE/);
  expect(listed.stdout).toContain('1.4.0');
  expect((await otactl(f, ['deployments', 'ramp', released.deployment.id, '60'])).stdout).toContain('active at 60%');
  expect((await otactl(f, ['deployments', 'pause', released.deployment.id])).stdout).toContain('paused');
  expect((await otactl(f, ['deployments', 'show', released.deployment.id])).stdout).toContain('build 5 paused at 60%');
  expect((await otactl(f, ['deployments', 'resume', released.deployment.id])).code).toBe(0);
  // --if-version applies only to the version the caller saw: a stale one is refused with what it is now.
  const seen = JSON.parse((await otactl(f, ['--json', 'deployments', 'show', released.deployment.id])).stdout).deployment as { version: number };
  expect((await otactl(f, ['deployments', 'pause', released.deployment.id, '--if-version', String(seen.version)])).stdout).toContain(`paused at 60% (version ${seen.version + 1})`);
  const stale = await otactl(f, ['deployments', 'resume', released.deployment.id, '--if-version', String(seen.version)]);
  expect(stale.code).toBe(4);
  expect(stale.stderr).toContain(`the deployment changed since version ${seen.version}: it is now paused at 60%`);
  expect((await otactl(f, ['deployments', 'list', '--if-version', '3'])).code).toBe(1);
  expect((await otactl(f, ['deployments', 'resume', released.deployment.id])).code).toBe(0);

  // Prune keeps the newest two and the build the deployment uses.
  const dry = JSON.parse((await otactl(f, ['--json', 'artifacts', 'prune', '--keep', '2', '--dry-run'])).stdout);
  expect(dry.would_archive).toHaveLength(3);
  const pruned = await otactl(f, ['artifacts', 'prune', '--keep', '2']);
  expect(pruned.stdout).toContain('archived 3 builds: 3, 2, 1');
  const artifacts = JSON.parse((await otactl(f, ['--json', 'artifacts', 'list'])).stdout) as Array<{ build_number: number; archived: boolean }>;
  expect(artifacts.filter((artifact) => !artifact.archived).map((artifact) => artifact.build_number).sort()).toEqual([4, 5]);

  const devices = await otactl(f, ['devices', 'list', '--group', 'canary']);
  expect(devices.stdout).toContain('d-1');
  expect(devices.stdout).toContain('2 of 2');
  expect((await otactl(f, ['devices', 'show', 'd-2'])).stdout).toContain('checked:');
  // Group membership by filter, as one change in the service, followed to its end.
  const removed = JSON.parse((await otactl(f, ['--json', 'groups', 'remove', 'canary'])).stdout);
  expect(removed).toMatchObject({ state: 'done', removed: 2, devices_matched: 2 });
  const added = await otactl(f, ['groups', 'add', 'canary', '--search', 'd-1']);
  expect(added.stdout).toContain('added 1 devices to canary (1 matched)');
  expect((await otactl(f, ['devices', 'list', '--group', 'canary'])).stdout).toContain('1 of 1');
  expect((await otactl(f, ['groups', 'add', 'nobody'])).code).toBe(4);
  const projects = JSON.parse((await otactl(f, ['--json', 'projects', 'list'])).stdout);
  expect(projects).toEqual([expect.objectContaining({ id: f.project.id })]);
  expect((await otactl(f, ['--help'])).stdout).toContain('Exit codes:');
}, 120_000);

test('a release whose image raises secure_version is refused (exit 4) unless acknowledged', async () => {
  const f = await setupProject();
  const path = join(work, 'raising.bin');
  writeFileSync(path, makeEspImage({ secureVersion: 1 }));
  const flags = ['release', '--binary', path, '--version', '3.0.0', '--chip-family', 'esp32c3', '--channel', 'stable'];
  const refused = await otactl(f, flags);
  expect(refused.code).toBe(4);
  expect(refused.stdout + refused.stderr).toContain('raises secure_version from 0 to 1');
  expect(refused.stderr).toContain('image: esp32c3 v0.3-v1.99, secure version 1 (raises it from 0, 15 eFuse raises left)');
  const released = await otactl(f, [...flags, '--acknowledge-secure-version-raise']);
  expect(released.code).toBe(0);
  const deployments = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token })).body as unknown[];
  expect(deployments).toHaveLength(1);
  const listed = await otactl(f, ['artifacts', 'list']);
  expect(listed.stdout).toMatch(/IMAGE/);
  expect(listed.stdout).toContain('esp32c3 v0.3-v1.99, secure version 1 (raises it from 0, 15 eFuse raises left)');
});

test("--elf sends the image's ELF with the release, and a wrong one stops it before any deployment", async () => {
  const f = await setupProject();
  const build = makeEspBuild({ crashCode: true, version: '5.0.0' });
  const imagePath = join(work, 'crashing.bin');
  const elfPath = join(work, 'crashing.elf');
  const otherElfPath = join(work, 'other.elf');
  writeFileSync(imagePath, build.image);
  writeFileSync(elfPath, build.elf);
  writeFileSync(otherElfPath, makeEspBuild({ crashCode: true, version: '5.0.1' }).elf);
  const flags = ['--json', 'release', '--binary', imagePath, '--version', '5.0.0', '--chip-family', 'esp32c3', '--channel', 'stable'];

  const wrong = await otactl(f, [...flags, '--elf', otherElfPath]);
  expect(wrong.code).toBe(4);
  expect(wrong.stderr).toMatch(/not the ELF build \d+'s image was made from/);
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token })).body).toEqual([]);

  const released = await otactl(f, [...flags, '--elf', elfPath]);
  expect(released.code).toBe(0);
  expect(JSON.parse(released.stdout).artifact.id).toBeTruthy();
  const artifacts = (await api('GET', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token })).body as Array<{ elf: { sha256: string } | null }>;
  expect(artifacts[0]!.elf).toMatchObject({ sha256: createHash('sha256').update(build.elf).digest('hex') });
  expect((await otactl(f, ['release', '--binary', imagePath, '--version', '5.0.0', '--chip-family', 'esp32c3', '--elf', join(work, 'missing.elf')])).code).toBe(1);
});

test('--sbom sends the build\'s SBOM with the release; one the service cannot read stops it before any deployment', async () => {
  const f = await setupProject();
  const imagePath = join(work, 'with-sbom.bin');
  const sbomPath = join(work, 'app.spdx');
  const foreignPath = join(work, 'app.xml');
  writeFileSync(imagePath, makeEspImage({ version: '6.0.0' }));
  const sbom = makeEspSbom({ version: '6.0.0', components: [{ name: 'mbedtls', version: '3.6.2' }], format: 'spdx-tag-value' });
  writeFileSync(sbomPath, sbom);
  writeFileSync(foreignPath, '<?xml version="1.0"?><bom/>');
  const flags = ['--json', 'release', '--binary', imagePath, '--version', '6.0.0', '--chip-family', 'esp32c3', '--channel', 'stable'];

  const foreign = await otactl(f, [...flags, '--sbom', foreignPath]);
  expect(foreign.code).toBe(4);
  expect(foreign.stderr).toMatch(/not an SBOM this service reads/);
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token })).body).toEqual([]);

  const released = await otactl(f, [...flags, '--sbom', sbomPath]);
  expect([released.code, released.stderr]).toEqual([0, expect.stringContaining('uploaded its SBOM (spdx-2.2-tag-value, 4 components)')]);
  const artifacts = (await api('GET', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token })).body as Array<{ sbom: { sha256: string } | null }>;
  expect(artifacts[0]!.sbom).toMatchObject({ sha256: createHash('sha256').update(sbom).digest('hex'), format: 'spdx-2.2-tag-value' });
  expect((await otactl(f, ['release', '--binary', imagePath, '--version', '6.0.0', '--chip-family', 'esp32c3', '--sbom', join(work, 'missing.spdx')])).code).toBe(1);
});
