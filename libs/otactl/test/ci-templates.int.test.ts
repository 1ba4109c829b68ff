import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateAction, validateWorkflow } from '@action-validator/core';
import { parse } from 'yaml';
import { randomBinary, setupProject, testStack, type ProjectFixture } from '@ota/testkit';
import { fleetInGroup, fleetUpdates } from './fleet';
import { runProcess, type Run } from './run-process';

// The GitHub Action (action.yml) and the GitLab CI template (deploy/ci/ota-release.gitlab-ci.yml),
// checked against GitHub's schemas and run the way their runners run them: each step's `run` in
// bash, its inputs as environment variables, against the real stack (docs/ci.md).

const ROOT = join(__dirname, '..', '..', '..');
const work = mkdtempSync(join(tmpdir(), 'ota-ci-'));

interface ActionStep {
  id?: string;
  shell: string;
  run: string;
  env?: Record<string, string>;
}

interface Action {
  inputs: Record<string, { required: boolean; default?: string }>;
  runs: { using: string; steps: ActionStep[] };
}

function runBash(script: string, env: Record<string, string>): Promise<Run> {
  // What a composite step with `shell: bash` runs.
  return runProcess('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { env: { PATH: process.env.PATH!, ...env } });
}

/** Runs the action's steps in order as the runner would: `${{ inputs.x }}` from `with` or the input's default. */
async function runAction(with_: Record<string, string>): Promise<{ code: number; outputs: Record<string, string>; log: string }> {
  const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as Action;
  for (const [name, input] of Object.entries(action.inputs)) if (input.required && !(name in with_)) throw new Error(`the test must give the required input ${name}`);
  const expression = (text: string) =>
    text.replace(/\$\{\{\s*(inputs\.([a-z-]+)|github\.run_id)\s*\}\}/g, (_, whole: string, input?: string) => (input ? (with_[input] ?? action.inputs[input]?.default ?? '') : '4242'));
  const outputFile = join(work, `output-${randomBytes(4).toString('hex')}`);
  writeFileSync(outputFile, '');
  let log = '';
  for (const step of action.runs.steps) {
    expect(step.shell).toBe('bash');
    const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([name, value]) => [name, expression(String(value))]));
    const result = await runBash(expression(step.run), { ...env, GITHUB_ACTION_PATH: ROOT, GITHUB_OUTPUT: outputFile });
    log += result.stdout + result.stderr;
    if (result.code !== 0) return { code: result.code, outputs: outputsOf(outputFile), log };
  }
  return { code: 0, outputs: outputsOf(outputFile), log };
}

function outputsOf(file: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

async function canaryProject(deviceIds: string[]): Promise<ProjectFixture> {
  const f = await setupProject();
  await fleetInGroup(f, 'canary', deviceIds);
  return f;
}

test("action.yml and the docs' workflow pass GitHub's schemas; the GitLab template defines its job", () => {
  expect(validateAction(readFileSync(join(ROOT, 'action.yml'), 'utf8')).errors).toEqual([]);
  const docs = readFileSync(join(ROOT, 'docs', 'ci.md'), 'utf8');
  const workflow = /<!-- github-workflow:begin -->\n```yaml\n([\s\S]*?)```\n<!-- github-workflow:end -->/.exec(docs)![1]!;
  expect(validateWorkflow(workflow).errors).toEqual([]);
  // The docs' workflow uses only inputs the action has.
  const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as Action;
  const steps = (parse(workflow) as { jobs: { release: { steps: Array<{ uses?: string; with?: Record<string, string> }> } } }).jobs.release.steps;
  for (const step of steps.filter((candidate) => candidate.uses?.startsWith('platform/ota'))) {
    for (const input of Object.keys(step.with ?? {})) expect(Object.keys(action.inputs)).toContain(input);
  }
  const gitlab = parse(readFileSync(join(ROOT, 'deploy', 'ci', 'ota-release.gitlab-ci.yml'), 'utf8')) as Record<string, { script: string[] }>;
  expect(gitlab['.ota-release']!.script.at(-1)).toContain('otactl-release.sh release');
  expect((readFileSync(join(ROOT, 'deploy', 'ci', 'otactl-release.sh')).at(0))).toBe('#'.charCodeAt(0));
});

test('the action releases to the canary and passes when it confirms, and fails the job with exit 2 when a guardrail trips', async () => {
  const canary = ['a-1', 'a-2'];
  const f = await canaryProject(canary);
  const binary = join(work, 'good.bin');
  writeFileSync(binary, randomBinary(2048));
  const inputs = { url: testStack().gatewayUrl, token: f.apiToken, binary, version: '3.0.0', 'chip-family': 'esp32', groups: 'canary', until: 'confirmed:100%', timeout: '60s' };
  const passing = runAction(inputs);
  await fleetUpdates(f, 1, canary, [{ event: 'downloaded' }, { event: 'confirmed' }]);
  const passed = await passing;
  expect(passed.code).toBe(0);
  expect(passed.outputs).toMatchObject({ result: 'met', 'build-number': '1' });
  expect(passed.outputs['deployment-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(passed.log).not.toContain(f.apiToken);

  const badBinary = join(work, 'bad.bin');
  writeFileSync(badBinary, randomBinary(2048));
  const failing = runAction({ ...inputs, binary: badBinary, version: '3.0.1', 'reason-limits': 'health_check_failed:2:10m', until: 'completed' });
  await fleetUpdates(f, 2, canary, [{ event: 'flashed' }, { event: 'rolled_back', reason: 'health_check_failed' }]);
  const failed = await failing;
  expect(failed.code).toBe(2);
  expect(failed.outputs.result).toBe('paused');
  expect(failed.log).toContain('reason limit: 2 failures with reason health_check_failed');
}, 180_000);

test("the GitLab template's script runs the same release with its variables", async () => {
  const f = await canaryProject(['g-1']);
  const binary = join(work, 'gitlab.bin');
  writeFileSync(binary, randomBinary(1024));
  const template = parse(readFileSync(join(ROOT, 'deploy', 'ci', 'ota-release.gitlab-ci.yml'), 'utf8')) as Record<string, { variables: Record<string, string>; script: string[] }>;
  const job = template['.ota-release']!;
  // The clone of this repository is where the runner would fetch it; here it is this checkout.
  const script = job.script.filter((line) => !line.startsWith('git clone')).map((line) => line.replaceAll('/tmp/ota', ROOT));
  const variables = {
    ...job.variables,
    OTA_RUN_ID: '77',
    OTA_URL: testStack().gatewayUrl,
    OTA_TOKEN: f.apiToken,
    OTA_BINARY: binary,
    OTA_VERSION: '4.0.0',
    OTA_CHIP_FAMILY: 'esp32',
    OTA_GROUPS: 'canary',
    OTA_WAIT: 'false',
    OTA_WINDOWS: 'sat,sun@01:30+3h;wed@22:00+45m',
    OTA_WINDOW_ZONE: 'Europe/Berlin',
    OTA_HEALTH_GUARDRAIL: 'true',
  };
  const result = await runBash(script.join('\n'), variables);
  expect(result.code).toBe(0);
  const answer = JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
  expect(answer.deployment).toMatchObject({ state: 'active', build_number: 1 });
  // The maintenance windows and the health guardrail reached the deployment.
  const deployment = await (await fetch(`${testStack().gatewayUrl}/api/v1/projects/${f.project.id}/deployments/${answer.deployment.id}/`, { headers: { authorization: `Bearer ${f.user.token}` } })).json();
  expect(deployment.guardrails.health_regression).toMatchObject({ margin_percent: 50 });
  expect(deployment.maintenance_windows).toEqual({
    time_zone: 'Europe/Berlin',
    in_device_local_time: false,
    windows: [
      { days: ['sat', 'sun'], start: '01:30', duration_minutes: 180 },
      { days: ['wed'], start: '22:00', duration_minutes: 45 },
    ],
  });
}, 120_000);
