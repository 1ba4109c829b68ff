import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { api, checkBody, createUser, testStack } from '@ota/testkit';
import { expectText, LAPTOP, launchChromium, screenshot, signIn } from './browser';

// The console in a real browser (Debian's chromium, driven by playwright-core) against the real
// stack: a person signs in, creates a project, uploads a build, rolls it out to a canary group,
// and follows the devices' reports in the progress view and a device's timeline. The screenshots
// the README shows are taken here, so they show what the console really draws.

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'docs', 'images');

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** A device of the test's fleet: checks in, then reports each event in turn. */
async function device(token: string, deviceId: string, deploymentId: string | undefined, events: Array<{ event: string; reason?: string; build_number?: number }>) {
  const checked = await api('POST', '/api/v1/ota/check/', { token, json: checkBody(deviceId, { chip_family: 'esp32s3' }) });
  expect(checked.status).toBe(200);
  for (const event of events) {
    const reported = await api('POST', '/api/v1/ota/status/', { token, json: { device_id: deviceId, deployment_id: deploymentId, ...event } });
    expect(reported.body.accepted).toBe(true);
  }
  return checked.body;
}

test('a canary rollout followed from sign-in to the device timeline, and the session ending with its token', async () => {
  const user = createUser();
  const context = await browser.newContext({ viewport: LAPTOP });
  const page = await context.newPage();
  const apiOf = (path: string) => `${testStack().gatewayUrl}/api/v1${path}`;

  await signIn(page, user);
  // The raw token is in no script-readable storage: the session is an HttpOnly cookie.
  const stored = await page.evaluate(() => JSON.stringify({ cookie: document.cookie, local: { ...localStorage }, session: { ...sessionStorage } }));
  expect(stored).not.toContain(user.token);
  expect(stored).not.toContain('ota_session');
  const cookies = await context.cookies();
  expect(cookies.find((cookie) => cookie.name === 'ota_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  // A mutating call with the cookie but without the CSRF token is refused.
  const forged = await page.evaluate(async (url) => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"forged"}' })).status, apiOf('/projects/'));
  expect(forged).toBe(403);

  // A project, created in the console.
  await page.getByLabel('New project').fill('Greenhouse sensors');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('link', { name: 'Greenhouse sensors' }).click();
  await page.getByRole('heading', { name: 'Deployments' }).waitFor();
  const projectId = /projects\/([0-9a-f-]{36})/.exec(page.url())![1]!;

  // A fleet token, shown once.
  await page.getByRole('link', { name: 'Tokens and keys' }).click();
  await page.getByLabel('New token').fill('fleet');
  await page.getByLabel('Scope').selectOption('device');
  await page.getByRole('button', { name: 'Create token' }).click();
  const fleetToken = (await page.getByTestId('raw-token').textContent())!;
  expect(fleetToken).toMatch(/^ota_prj_/);
  await page.getByRole('button', { name: 'Done' }).click();

  // Twelve devices check in; ten of them go into a canary group.
  const fleet = Array.from({ length: 12 }, (_, i) => `greenhouse-${String(i + 1).padStart(2, '0')}`);
  for (const deviceId of fleet) await device(fleetToken, deviceId, undefined, []);
  await page.getByRole('link', { name: 'Groups and channels' }).click();
  await page.getByLabel('New group').fill('canary');
  await page.getByRole('button', { name: 'Create group' }).click();
  await expectText(page.getByTestId('group-canary'), '0 devices');
  // The canary is chosen in the device list: ticked one by one, then added in one step.
  await page.getByRole('link', { name: 'Devices', exact: true }).click();
  await expectText(page.getByTestId('device-count'), 'Devices 1–12 of 12');
  for (const deviceId of fleet.slice(0, 10)) await page.getByLabel(`Select ${deviceId}`).check();
  await page.getByLabel('Group to change').selectOption({ label: 'canary' });
  await page.getByRole('button', { name: 'Add to group…' }).click();
  await expectText(page.getByTestId('bulk-impact'), 'No active or paused deployment targets canary');
  await page.getByRole('dialog').getByRole('button', { name: 'Add to group' }).click();
  await expectText(page.getByTestId('bulk-progress'), 'Added 10 devices to canary.');

  // A build, uploaded with its manifest and a progress bar.
  await page.getByRole('link', { name: 'Artifacts' }).click();
  await page.getByLabel('Version label').fill('2.1.0');
  await page.getByLabel('Chip family').fill('esp32s3');
  await page.getByLabel('Binary', { exact: true }).setInputFiles({ name: 'firmware.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(256 * 1024, 7) });
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.getByText('Uploaded build 1 (2.1.0)').waitFor();

  // A draft to the canary group at 50%, ramped to 100% once started.
  await page.getByRole('link', { name: 'Deployments' }).click();
  // The form is the Deployments page's: wait for it, so that the label is not read on the page being left.
  await page.getByRole('heading', { name: 'New deployment' }).waitFor();
  await page.getByLabel('Build').selectOption({ index: 1 });
  await page.getByRole('checkbox', { name: 'canary' }).check();
  // How many devices the chosen targets reach, before the draft exists.
  await expectText(page.getByTestId('reach'), 'These targets reach 10 devices now.');
  await page.getByLabel('Rollout percentage').fill('50');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.getByText('active', { exact: true }).first().waitFor();
  await page.getByLabel('Ramp to').fill('100');
  await page.getByRole('button', { name: 'Ramp' }).click();
  await expectText(page.getByTestId('rollout-percentage'), '100%');
  const deploymentId = /deployments\/([0-9a-f-]{36})/.exec(page.url())![1]!;

  // The canary devices update: six confirm, two fail their checksum, one rolls back, one is still downloading.
  const done = [{ event: 'download_started' }, { event: 'downloaded' }, { event: 'flashed' }, { event: 'reboot' }, { event: 'confirmed', build_number: 1 }];
  for (const deviceId of fleet.slice(0, 6)) await device(fleetToken, deviceId, deploymentId, done);
  for (const deviceId of fleet.slice(6, 8)) await device(fleetToken, deviceId, deploymentId, [{ event: 'download_started' }, { event: 'failed', reason: 'checksum_mismatch' }]);
  await device(fleetToken, fleet[8]!, deploymentId, [{ event: 'downloaded' }, { event: 'flashed' }, { event: 'rolled_back', reason: 'confirm_timeout' }]);
  await device(fleetToken, fleet[9]!, deploymentId, [{ event: 'download_started' }, { event: 'downloaded' }]);
  // The two devices outside the group check too, and are not offered anything.
  for (const deviceId of fleet.slice(10)) expect((await device(fleetToken, deviceId, undefined, [])).status).toBe('no_active_deployment');

  // The progress view refreshes by itself.
  const counts = page.getByTestId('status-counts');
  await expectText(counts.locator('[data-status="confirmed"]'), 'confirmed: 6');
  await expectText(counts.locator('[data-status="failed"]'), 'failed: 2');
  await expectText(counts.locator('[data-status="rolled_back"]'), 'rolled back: 1');
  await expectText(counts.locator('[data-status="downloaded"]'), 'downloaded: 1');
  await expectText(page.getByTestId('failure-count'), '3');
  await expectText(page.getByTestId('headline'), '6 of 10 updated (60%) · 3 failed or rolled back · 1 in progress · 0 not offered yet');
  const reasons = await page.getByTestId('failures-by-reason').locator('tbody tr').allTextContents();
  expect(reasons).toEqual(['the download’s checksum did not match checksum_mismatch2', 'not confirmed before the device’s own timeout confirm_timeout1']);
  await page.getByRole('link', { name: fleet[6]! }).waitFor();

  // The preview: what the next check of each device would answer. The six that confirmed are up to
  // date, the failed and the downloading devices would be offered the build again, the one that
  // rolled back is never offered it again, and the two outside the group are not targeted.
  await page.getByRole('button', { name: 'Preview the next checks' }).click();
  const outcomes = page.getByTestId('preview-counts');
  await expectText(outcomes.locator('[data-status="up_to_date"]'), 'already up to date: 6');
  await expectText(outcomes.locator('[data-status="offered"]'), 'would be offered the build: 3');
  await expectText(outcomes.locator('[data-status="not_in_rollout"]'), 'outside the percentage, or rolled this build back: 1');
  await expectText(outcomes.locator('[data-status="not_targeted"]'), 'outside the targets: 2');
  for (const deviceId of fleet.slice(10)) await expectText(page.getByTestId('preview-samples'), deviceId);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'console-rollout.png'), fullPage: true });

  // A failed device's timeline: its reports, with the reason verbatim, merged with its checks.
  await page.getByRole('link', { name: fleet[6]! }).click();
  await page.getByRole('heading', { name: fleet[6]! }).waitFor();
  const timeline = page.getByTestId('timeline');
  await expectText(timeline.locator('li').first(), 'failed the download’s checksum did not match');
  // Reports and checks load separately: wait for the check that offered the build.
  await expectText(timeline, 'checked');
  const lines = await timeline.locator('li').allTextContents();
  expect(lines.filter((line) => line.includes('reported'))).toHaveLength(2);
  expect(lines.some((line) => line.includes('checked') && line.includes('offered an update'))).toBe(true);
  await page.screenshot({ path: join(SCREENSHOTS, 'console-device-timeline.png'), fullPage: true });

  // An API refusal is shown as the API's detail: no project with an active deployment is deleted.
  await page.getByRole('link', { name: 'Projects' }).click();
  await page.getByRole('button', { name: 'Delete Greenhouse sensors' }).click();
  // Deleting a project wants its name typed first.
  await expect(page.getByRole('button', { name: 'Delete project' }).isDisabled()).resolves.toBe(true);
  await page.getByLabel('Type Greenhouse sensors to confirm').fill('Greenhouse sensors');
  await page.getByRole('button', { name: 'Delete project' }).click();
  await page.getByRole('dialog').getByRole('alert').waitFor();
  expect(await page.getByRole('dialog').getByRole('alert').textContent()).toMatch(/active or paused.*\(409\)/);
  await page.getByRole('button', { name: 'Go back' }).click();

  // A deployment with no targets asks before it reaches the whole project, and says how many devices that is.
  await page.getByRole('link', { name: 'Greenhouse sensors' }).click();
  // The new deployment's first summary is held back until the dialog has been seen: a Start pressed before
  // the count has loaded must still ask (the API refuses a target-less start without confirm_all).
  let releaseSummary!: () => void;
  const summaryHeld = new Promise<void>((resolve) => (releaseSummary = resolve));
  await page.route('**/deployments/*/summary/', async (route) => {
    await summaryHeld;
    await route.continue();
  });
  await page.getByLabel('Build').selectOption({ index: 1 });
  await page.getByRole('button', { name: 'Create draft' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  await expectText(page.getByRole('dialog'), 'reaches every device of the project');
  releaseSummary();
  await expectText(page.getByRole('dialog'), 'reaches all 12 devices');
  await page.keyboard.press('Escape');
  await expectText(page.locator('h1 .state'), 'draft');

  // A deployment that protects itself: guardrails and a staged plan set in the form, shown on its page.
  await page.getByRole('link', { name: 'Deployments', exact: true }).first().click();
  await page.getByLabel('Build').selectOption({ index: 1 });
  await page.getByText('Guardrails, caps and staged plan (optional)').click();
  await page.getByLabel('Failed share reaches (%)').fill('20');
  await page.getByLabel('once this many devices finished').fill('5');
  await page.getByLabel('reach this many').fill('3');
  await page.getByLabel('Updated devices crash (panic, watchdog, brownout) more often than those not yet updated').check();
  await page.getByLabel('by more than (%)').fill('100');
  // The other settings show the API's defaults, and are sent as shown.
  expect(await page.getByLabel('at a significance of').inputValue()).toBe('0.001');
  await page.getByLabel('and device-hours').fill('80');
  await page.getByLabel('New offers a minute').fill('120');
  await page.getByLabel('Stages (percentages, comma-separated)').fill('10, 50, 100');
  await page.getByLabel('Minutes at each stage before the next').fill('30');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await expectText(
    page.getByTestId('guardrails'),
    'pause at 20% failed of at least 5 finished; pause on 3 × signature_invalid within 600 s; pause when updated devices reset abnormally more than 100% more often than those not yet updated',
  );
  await expectText(page.getByTestId('caps'), 'at most 120 new offers a minute');
  // A draft's health is counted once it starts.
  await expectText(page.locator('section', { has: page.getByRole('heading', { name: /Device health/ }) }), 'Counted once the deployment starts');
  await expectText(page.getByTestId('stage'), '3 stages (10% for 30 min → 50% for 30 min → 100% for 30 min)');
  // A plan the API refuses shows its detail.
  await page.getByRole('link', { name: 'Deployments', exact: true }).first().click();
  await page.getByLabel('Build').selectOption({ index: 1 });
  await page.getByText('Guardrails, caps and staged plan (optional)').click();
  await page.getByLabel('Stages (percentages, comma-separated)').fill('50, 20');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await expectText(page.getByRole('alert'), 'stages[1].percentage must be above the stage before it');

  // A maintenance window set in the form is shown on the deployment's page; a zone the API does not know shows its detail.
  await page.getByRole('link', { name: 'Deployments', exact: true }).first().click();
  // A fresh form: the refused plan above is still typed into this one.
  await page.reload();
  await page.getByLabel('Build').selectOption({ index: 1 });
  await page.getByText('Maintenance windows (optional)').click();
  await page.getByRole('group', { name: 'On these days' }).getByLabel('Sat').check();
  await page.getByRole('group', { name: 'On these days' }).getByLabel('Sun').check();
  await page.getByLabel('from (local time)').fill('01:30');
  await page.getByLabel('for (hours)').fill('3');
  await page.getByLabel('in the time zone').fill('Mars/Olympus_Mons');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await expectText(page.getByRole('alert'), 'maintenance_windows.time_zone names no time zone this service knows');
  await screenshot(page, 'deployment-form-window-refused');
  await page.getByLabel('in the time zone').fill('Europe/Berlin');
  // A second window, as the API takes up to 20; a third added and removed again leaves two.
  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('group', { name: 'Window 2: on these days' }).getByLabel('Wed').check();
  await page.getByLabel('from (local time), window 2', { exact: true }).fill('22:00');
  await page.getByLabel('for (hours), window 2', { exact: true }).fill('1.5');
  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('button', { name: 'Remove window 3' }).click();
  await page.getByRole('button', { name: 'Create draft' }).click();
  await expectText(page.getByTestId('maintenance-windows'), 'only in maintenance windows: sat, sun from 01:30 for 3 h; wed from 22:00 for 90 min, Europe/Berlin');
  await expectText(page.getByText(/would answer now/), 'as if its maintenance windows were open');
  await screenshot(page, 'deployment-with-window');

  // Revoking the token the console signed in with ends the session: the next refresh shows the sign-in page.
  const pats = await api('GET', '/api/v1/me/tokens/', { token: user.token });
  expect((await api('DELETE', `/api/v1/me/tokens/${pats.body[0].id}/`, { token: user.token })).status).toBe(204);
  await page.getByRole('heading', { name: 'Sign in to the OTA console' }).waitFor({ timeout: 15_000 });
  const afterRevoke = await page.evaluate(async (url) => (await fetch(url)).status, apiOf(`/projects/${projectId}/`));
  expect(afterRevoke).toBe(401);
  await context.close();
}, 240_000);

test('signing out ends the session at once, and a wrong token is refused with the API detail', async () => {
  const user = createUser();
  const context = await browser.newContext({ viewport: LAPTOP });
  const page = await context.newPage();
  await page.goto(`${testStack().gatewayUrl}/console/`);
  await page.getByLabel('Personal token').fill('ota_pat_not-a-real-token-at-all-000000000000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expectText(page.getByRole('alert'), 'invalid or revoked token (401)');

  await signIn(page, user);
  const [cookie] = (await context.cookies()).filter((candidate) => candidate.name === 'ota_session');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to the OTA console' }).waitFor();
  // The old cookie, presented again, names no session.
  const replayed = await api('GET', '/api/v1/session/', { headers: { cookie: `ota_session=${cookie!.value}` } });
  expect(replayed.status).toBe(401);
  await context.close();
}, 120_000);
