import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANIFEST, api, randomBinary, setupProject, testStack } from '@ota/testkit';

// The script in docs/ci.md, run as written, with bash and curl, against the real gateway.

const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'ci.md'), 'utf8');
const script = /<!-- ci-script:begin -->\n```sh\n([\s\S]*?)```\n<!-- ci-script:end -->/.exec(doc)![1]!;

it('uploads, deploys a 10% canary to a group, starts, ramps to 100 and completes', async () => {
  const f = await setupProject({ name: 'ci script' });
  await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.apiToken, json: { name: 'other' } });
  const group = await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.apiToken, json: { name: 'canary' } });
  const dir = mkdtempSync(join(tmpdir(), 'ota-ci-'));
  try {
    writeFileSync(join(dir, 'ci.sh'), script);
    writeFileSync(join(dir, 'firmware.bin'), randomBinary(4096));
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...MANIFEST, version_label: '2.1.0' }));
    const run = spawnSync('bash', [join(dir, 'ci.sh')], {
      cwd: dir,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        OTA_URL: testStack().gatewayUrl,
        OTA_TOKEN: f.apiToken,
        OTA_PROJECT: f.project.id,
        FIRMWARE: 'firmware.bin',
        MANIFEST: 'manifest.json',
      },
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('start: active');
    expect(run.stdout).toContain('ramp to 100: active');
    expect(run.stdout).toContain('complete: completed');

    const [deployment] = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.apiToken })).body;
    expect(deployment).toMatchObject({ state: 'completed', rollout_percentage: 100, target_group_ids: [group.body.id], target_channel_ids: [], version_label: '2.1.0' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('stops at the first refused call with the detail on stderr', async () => {
  const f = await setupProject({ name: 'ci script failure' });
  const dir = mkdtempSync(join(tmpdir(), 'ota-ci-'));
  try {
    writeFileSync(join(dir, 'ci.sh'), script);
    writeFileSync(join(dir, 'firmware.bin'), randomBinary(16));
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...MANIFEST, colour: 'red' }));
    const run = spawnSync('bash', [join(dir, 'ci.sh')], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, OTA_URL: testStack().gatewayUrl, OTA_TOKEN: f.apiToken, OTA_PROJECT: f.project.id, FIRMWARE: 'firmware.bin', MANIFEST: 'manifest.json' },
    });
    expect(run.status).not.toBe(0);
    expect(run.stdout + run.stderr).toContain('unknown key \\"colour\\"');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
