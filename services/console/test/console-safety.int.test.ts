import type { Browser, Page } from 'playwright-core';
import { MANIFEST, api, checkBody, createUser, eventually, makeEspImage, randomBinary, setupProject, uploadForm, WebhookReceiver, type ProjectFixture } from '@ota/testkit';
import { consoleUrl, expectText, LAPTOP, launchChromium, PHONE, screenshot, signedInPage, signIn } from './browser';

// A console an operator can trust with a live fleet (docs/console.md): what cannot be undone asks
// first and says what it ends, every number of a rollout agrees with the others, staff can work,
// lists of thousands page on the server, and the pages hold at a phone's width. Each test drives
// Chromium against the real stack.

let browser: Browser;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await browser?.close();
});

const signedIn = (f: ProjectFixture, viewport = LAPTOP): Promise<Page> => signedInPage(browser, f.user, viewport);

const checkIn = (f: ProjectFixture, deviceId: string) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });

async function startedDeployment(f: ProjectFixture, body: Record<string, unknown> = {}) {
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const created = (await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, ...body } })).body;
  const started = await api('POST', `/api/v1/projects/${f.project.id}/deployments/${created.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect(started.status).toBe(200);
  return started.body as { id: string; build_number: number };
}

const report = (f: ProjectFixture, deploymentId: string, deviceId: string, event: string, extra: Record<string, unknown> = {}) =>
  api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: deploymentId, event, ...extra } });

test('revoking a token asks and says what it ends; the fleet token wants its name; the session token is marked and needs a second step', async () => {
  const f = await setupProject();
  const second = await api('POST', '/api/v1/me/tokens/', { token: f.user.token, json: { name: 'laptop' } });
  expect(second.status).toBe(201);
  const page = await signedIn(f);

  await page.getByRole('link', { name: 'Personal tokens' }).click();
  const rows = page.locator('tbody tr');
  await expectText(rows.filter({ hasText: 'this session' }), 'ota_pat_');
  // A revoke asks; going back leaves the token live.
  await page.getByRole('button', { name: 'Revoke laptop' }).click();
  await expectText(page.getByRole('dialog'), 'Every script that uses it gets 401');
  await page.getByRole('button', { name: 'Go back' }).click();
  expect((await api('GET', '/api/v1/me/tokens/', { token: second.body.token })).status).toBe(200);

  // The fleet's device token: its name must be typed before the revoke is possible.
  await page.goto(consoleUrl(`/projects/${f.project.id}/tokens`));
  await page.getByRole('button', { name: 'Revoke device' }).click();
  await expectText(page.getByRole('dialog'), 'Every device that checks with it gets 401');
  const revoke = page.getByRole('dialog').getByRole('button', { name: 'Revoke token' });
  expect(await revoke.isDisabled()).toBe(true);
  await page.getByLabel('Type device to confirm').fill('devic');
  expect(await revoke.isDisabled()).toBe(true);
  await page.keyboard.press('Escape');
  expect((await checkIn(f, 'still-working')).status).toBe(200);

  // The token this console signed in with: marked, and revoked only with the acknowledgement.
  await page.goto(consoleUrl('/tokens'));
  const own = (await page.locator('tbody tr', { hasText: 'this session' }).locator('td').first().textContent())!.replace('this session', '').trim();
  await page.getByRole('button', { name: `Revoke ${own}` }).click();
  await expectText(page.getByRole('dialog'), 'This console is signed in with it');
  const signOut = page.getByRole('dialog').getByRole('button', { name: 'Revoke and sign out' });
  expect(await signOut.isDisabled()).toBe(true);
  await screenshot(page, 'revoke-session-token-1366');
  await page.getByLabel('I understand that this signs me out of this console now.').check();
  await signOut.click();
  await page.getByRole('heading', { name: 'Sign in to the OTA console' }).waitFor();
  await expectText(page.getByTestId('signed-out-note'), 'You revoked the token this console was signed in with');
  expect((await api('GET', '/api/v1/me/tokens/', { token: f.user.token })).status).toBe(401);
  await page.context().close();
}, 120_000);

test('a silent device counts as failed everywhere, cancel asks for the build number, and the guardrail banner stays after it', async () => {
  const f = await setupProject();
  const fleet = ['quiet-1', 'quiet-2', 'quiet-3', 'quiet-4'];
  for (const deviceId of fleet) await checkIn(f, deviceId);
  const deployment = await startedDeployment(f, { guardrails: { confirm_timeout_seconds: 1, failure_threshold: { percent: 50, min_finished: 2 } } });
  for (const deviceId of fleet) await checkIn(f, deviceId);
  await report(f, deployment.id, 'quiet-1', 'confirmed', { build_number: deployment.build_number });
  // quiet-2 downloads and goes silent; quiet-3 and quiet-4 were only offered.
  await report(f, deployment.id, 'quiet-2', 'downloaded');

  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await page.getByTestId('guardrail-pause').waitFor({ timeout: 20_000 });
  // One set of numbers: the headline, the bar, the failures by reason and the device table agree.
  await expectText(page.getByTestId('headline'), '1 of 4 updated (25%) · 1 failed or rolled back · 2 in progress');
  await expectText(page.getByTestId('status-counts').locator('[data-status="failed"]'), 'failed: 1');
  await expectText(page.getByTestId('status-counts').locator('[data-status="downloaded"]'), 'downloaded: 0');
  await expectText(page.getByTestId('failure-count'), '1');
  await expectText(page.getByTestId('failures-by-reason'), 'no confirmation in time');
  await expectText(page.locator('tbody tr', { hasText: 'quiet-2' }), 'failed');
  await expectText(page.locator('tbody tr', { hasText: 'quiet-2' }), 'no confirmation in time');
  await screenshot(page, 'deployment-paused-1366');

  // Cancel asks, its dismiss button is not called "Cancel", and it waits for the build number.
  await page.getByRole('button', { name: 'Cancel deployment…' }).click();
  const dialog = page.getByRole('dialog');
  await expectText(dialog, 'This is final');
  // What it does to devices mid-download (docs/api.md, "Stopping devices mid-update").
  await expectText(dialog, 'devices that have not yet installed it stop within 256 KiB of their download');
  expect(await dialog.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0);
  const confirm = dialog.getByRole('button', { name: 'Cancel deployment' });
  expect(await confirm.isDisabled()).toBe(true);
  await page.getByRole('button', { name: 'Go back' }).click();
  await expectText(page.locator('h1 .state'), 'paused');
  await page.getByRole('button', { name: 'Cancel deployment…' }).click();
  // The build number alone is not enough: a stray digit would be.
  await page.getByLabel(`Type cancel build ${deployment.build_number} to confirm`).fill(String(deployment.build_number));
  expect(await confirm.isDisabled()).toBe(true);
  await page.getByLabel(`Type cancel build ${deployment.build_number} to confirm`).fill(`cancel build ${deployment.build_number}`);
  await confirm.click();
  await expectText(page.locator('h1 .state'), 'cancelled');
  // Why it had paused is still said, and the progress no longer claims to refresh.
  await expectText(page.getByTestId('guardrail-pause'), 'The failure threshold paused it');
  await expectText(page.getByTestId('guardrail-pause'), 'It was then cancelled');
  await expectText(page.getByRole('heading', { name: /Progress/ }), 'final: the deployment is cancelled');
  await page.context().close();
}, 120_000);

test('the preview is dropped by a ramp, and a failed refresh keeps the last numbers marked as not current', async () => {
  const f = await setupProject();
  for (const deviceId of ['p-1', 'p-2', 'p-3']) await checkIn(f, deviceId);
  const deployment = await startedDeployment(f, { rollout_percentage: 10 });
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await page.getByRole('button', { name: 'Preview the next checks' }).click();
  await page.getByTestId('preview-samples').waitFor();
  await page.getByLabel('Ramp to').fill('100');
  await page.getByRole('button', { name: 'Ramp' }).click();
  await expectText(page.getByTestId('rollout-percentage'), '100%');
  expect(await page.getByTestId('preview-samples').count()).toBe(0);
  await page.getByRole('button', { name: 'Preview the next checks' }).waitFor();

  // The summary stops answering: the progress stays, marked with the failure.
  await expectText(page.getByTestId('headline'), 'of 3 updated');
  await page.route('**/summary/', (route) => route.fulfill({ status: 503, contentType: 'application/json', body: '{"detail":"the rollout service is unavailable"}' }));
  await expectText(page.getByTestId('stale'), 'the rollout service is unavailable');
  await expectText(page.getByTestId('headline'), 'of 3 updated');
  await screenshot(page, 'deployment-stale-1366');
  await page.context().close();
}, 120_000);

test('the channel select moves nothing until the move is confirmed, and deactivating asks', async () => {
  const f = await setupProject();
  await checkIn(f, 'mover');
  const beta = (await api('POST', `/api/v1/projects/${f.project.id}/channels/`, { token: f.user.token, json: { name: 'beta' } })).body;
  const device = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body[0];
  const read = async () => (await api('GET', `/api/v1/projects/${f.project.id}/devices/${device.id}/`, { token: f.user.token })).body;
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/devices/${device.id}`));
  const select = page.getByLabel('Channel', { exact: true });
  await select.focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowDown');
  // Browsing the options moved nothing.
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect((await read()).channel_id).toBe(f.defaultChannelId);
  await select.selectOption({ label: 'beta' });
  await page.getByRole('button', { name: 'Move…' }).click();
  await expectText(page.getByRole('dialog'), 'From its next check on');
  await page.getByRole('button', { name: 'Move device' }).click();
  await expectText(page.getByTestId('device-done'), 'Moved mover from stable to beta.');
  expect((await read()).channel_id).toBe(beta.id);

  await page.getByRole('button', { name: 'Deactivate…' }).click();
  await page.getByRole('button', { name: 'Go back' }).click();
  expect((await read()).active).toBe(true);
  await page.getByRole('button', { name: 'Deactivate…' }).click();
  await page.getByRole('button', { name: 'Deactivate device' }).click();
  await expectText(page.getByTestId('device-done'), 'is deactivated');
  expect((await read()).active).toBe(false);
  await page.context().close();
}, 120_000);

test('staff see their own projects and a customer’s by e-mail, read-only, with no action that would be refused', async () => {
  const customer = await setupProject({ name: 'Customer fleet' });
  for (const deviceId of ['c-1', 'c-2']) await checkIn(customer, deviceId);
  const deployment = await startedDeployment(customer);
  const staff = createUser({ staff: true });
  const context = await browser.newContext({ viewport: LAPTOP });
  const page = await context.newPage();
  await signIn(page, staff);
  await expectText(page.getByRole('main'), 'No projects yet');
  await page.getByLabel('New project').fill('Staff sandbox');
  await page.getByRole('button', { name: 'Create project' }).click();
  await expectText(page.getByTestId('own-projects'), 'Staff sandbox');

  await page.getByLabel('Customer e-mail').fill(customer.user.email);
  await page.getByRole('button', { name: 'Look up' }).click();
  await expectText(page.getByTestId('customer-projects'), 'Customer fleet');
  await page.getByTestId('customer-projects').getByRole('link', { name: 'Customer fleet' }).click();
  await page.getByRole('heading', { name: 'Deployments' }).waitFor();
  await page.goto(consoleUrl(`/projects/${customer.project.id}/deployments/${deployment.id}`));
  await page.getByTestId('headline').waitFor();
  await page.getByTestId('read-only').waitFor();
  // Shown, never hidden, and none of them can be used.
  for (const action of ['Pause', 'Complete…', 'Cancel deployment…']) expect(await page.getByRole('button', { name: action }).isDisabled()).toBe(true);
  await screenshot(page, 'staff-read-only-1366');
  await context.close();
}, 120_000);

test('a 500-device project is paged by the server with filters in the URL, and a filtered selection is added to a group in bulk', async () => {
  const f = await setupProject();
  for (let i = 0; i < 500; i += 1) await checkIn(f, `node-${String(i).padStart(3, '0')}`);
  const group = (await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'node-4xx' } })).body;
  const page = await signedIn(f);
  const listed: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes(`/projects/${f.project.id}/devices/?`)) listed.push(new URL(request.url()).search);
  });
  await page.goto(consoleUrl(`/projects/${f.project.id}/devices`));
  await expectText(page.getByTestId('device-count'), 'Devices 1–50 of 500');
  // The browser asked for a page, never for the whole fleet.
  expect(listed.length).toBeGreaterThan(0);
  for (const search of listed) expect(search).toContain('limit=50');
  const firstPage = await page.locator('tbody a').allTextContents();
  await page.getByRole('button', { name: 'Next' }).click();
  await expectText(page.getByTestId('device-count'), 'Devices 51–100 of 500');
  // The next page holds other devices (pages come in the order of the devices' ids).
  const secondPage = await page.locator('tbody a').allTextContents();
  expect(secondPage).toHaveLength(50);
  expect(secondPage.filter((deviceId) => firstPage.includes(deviceId))).toEqual([]);

  await page.getByLabel('Search').fill('node-4');
  await expectText(page.getByTestId('device-count'), 'Devices 1–50 of 100 matching the filters');
  expect(page.url()).toContain('q=node-4');
  // The filter survives a reload, and a link with it can be shared.
  await page.reload();
  await expectText(page.getByTestId('device-count'), 'of 100 matching the filters');
  // A reload keeps the tab's paging history (it lives in the history entry); a page reached from a
  // cursor in a shared link says where it starts, not a guessed position.
  await page.getByRole('button', { name: 'Next' }).click();
  await page.reload();
  await expectText(page.getByTestId('device-count'), 'Devices 51–100 of 100 matching the filters');
  const shared = await page.context().newPage();
  await shared.goto(page.url());
  await expectText(shared.getByTestId('device-count'), '50 devices on this page, of 100 matching the filters');
  await shared.close();
  await page.getByRole('link', { name: 'Devices', exact: true }).click();
  await page.getByLabel('Search').fill('node-4');
  await expectText(page.getByTestId('device-count'), 'Devices 1–50 of 100 matching the filters');
  await page.getByLabel('Which devices').selectOption({ label: 'all 100 devices matching the filters' });
  await page.getByLabel('Group to change').selectOption({ label: 'node-4xx' });
  await page.getByRole('button', { name: 'Add to group…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Add to group' }).click();
  await expectText(page.getByTestId('bulk-progress'), 'Added 100 devices to node-4xx.');
  const groups = (await api('GET', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token })).body;
  expect(groups.find((candidate: { id: string }) => candidate.id === group.id).member_count).toBe(100);

  // The group's count links to the device list filtered by it.
  await page.getByRole('link', { name: 'Groups and channels' }).click();
  await page.getByTestId('group-node-4xx').getByRole('link', { name: '100 devices' }).click();
  await expectText(page.getByTestId('device-count'), 'of 100 matching the filters');
  await screenshot(page, 'devices-filtered-1366');
  await page.context().close();
}, 240_000);

test('the webhooks page creates a webhook with its secret shown once, shows its deliveries, and deletes it after asking', async () => {
  const f = await setupProject();
  const receiver = await WebhookReceiver.start((_, attempt) => (attempt === 1 ? 500 : 204));
  receivers.push(receiver);
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/webhooks`));
  await expectText(page.getByRole('main'), 'No webhooks yet.');
  await page.getByLabel('Receiver URL').fill(receiver.url);
  await page.getByRole('checkbox', { name: /a build is uploaded/ }).check();
  await page.getByRole('button', { name: 'Create webhook' }).click();
  const secret = (await page.getByTestId('raw-token').textContent())!;
  expect(secret.length).toBeGreaterThan(20);
  await page.getByRole('button', { name: 'Done' }).click();
  expect(await page.getByText(secret).count()).toBe(0);

  await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) });
  await page.getByRole('button', { name: 'Deliveries' }).click();
  await expectText(page.getByTestId('delivery'), 'delivered');
  await expectText(page.getByTestId('delivery'), 'HTTP 204');
  await screenshot(page, 'webhooks-1366');

  await page.getByRole('button', { name: `Delete webhook ${receiver.url}` }).click();
  await page.getByRole('button', { name: 'Delete webhook', exact: true }).click();
  await expectText(page.getByRole('main'), 'No webhooks yet.');

  // The audit trail says who did it in words, and narrows to one resource.
  await page.getByRole('link', { name: 'Audit' }).click();
  await page.getByLabel('Show').selectOption({ label: 'Webhooks' });
  await expectText(page.locator('tbody tr').first(), 'Webhook deleted');
  await expectText(page.locator('tbody tr').first(), f.user.email);
  expect(await page.locator('tbody tr', { hasText: 'Artifact uploaded' }).count()).toBe(0);
  await page.context().close();
}, 120_000);

test('forms say what a deployment will reach and refuse silent mistakes: stages replace the percentage, an unknown chip family is flagged', async () => {
  const f = await setupProject();
  for (const deviceId of ['s3-1', 's3-2']) await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId, { chip_family: 'esp32s3' }) });
  await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm({ ...MANIFEST, chip_family: 'esp32s3' }, randomBinary(64)) });
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/artifacts`));
  await page.getByLabel('Chip family').fill('ESP32-S3');
  await expectText(page.getByTestId('chip-family-note'), 'No device of this project reports the chip family “ESP32-S3”');
  await expectText(page.getByTestId('chip-family-note'), 'Did you mean “esp32s3”?');
  await page.getByLabel('Chip family').fill('esp32s3');
  expect(await page.getByTestId('chip-family-note').count()).toBe(0);
  expect(await page.getByLabel('Version label').getAttribute('maxlength')).toBe('128');

  await page.getByRole('link', { name: 'Deployments' }).click();
  await expectText(page.getByTestId('reach'), 'These targets reach 2 devices now: every device of the project.');
  await page.getByLabel('Build').selectOption({ index: 1 });
  await page.getByText('Guardrails, caps and staged plan (optional)').click();
  await page.getByLabel('Stages (percentages, comma-separated)').fill('60, 100');
  expect(await page.getByLabel('Rollout percentage').count()).toBe(0);
  await expectText(page.getByTestId('starts-at'), 'Starts at the first stage: 60%');
  await page.context().close();
}, 120_000);

test('at 390 px every page fits the screen: the header keeps Sign out, the tabs stay one row, wide tables scroll inside themselves', async () => {
  const f = await setupProject();
  for (const deviceId of ['narrow-device-with-a-long-identifier-0001', 'n-2']) await checkIn(f, deviceId);
  const deployment = await startedDeployment(f);
  const device = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body[0];
  const page = await signedIn(f, PHONE);
  const pages: Array<[string, string]> = [
    ['projects', '/'],
    ['deployments', `/projects/${f.project.id}/deployments`],
    ['deployment', `/projects/${f.project.id}/deployments/${deployment.id}`],
    ['devices', `/projects/${f.project.id}/devices`],
    ['device', `/projects/${f.project.id}/devices/${device.id}`],
    ['artifacts', `/projects/${f.project.id}/artifacts`],
    ['groups', `/projects/${f.project.id}/groups`],
    ['tokens', `/projects/${f.project.id}/tokens`],
    ['webhooks', `/projects/${f.project.id}/webhooks`],
    ['audit', `/projects/${f.project.id}/audit`],
  ];
  for (const [name, path] of pages) {
    await page.goto(consoleUrl(path));
    await page.getByRole('main').locator('h1').first().waitFor();
    await page.waitForLoadState('networkidle').catch(() => undefined);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect({ page: name, overflow }).toEqual({ page: name, overflow: 0 });
    const signOut = await page.getByRole('button', { name: 'Sign out' }).boundingBox();
    expect(signOut && signOut.x >= 0 && signOut.x + signOut.width <= PHONE.width).toBe(true);
    const tabs = page.getByRole('navigation', { name: 'Project' });
    if (await tabs.count()) expect((await tabs.boundingBox())!.height).toBeLessThan(60);
    await screenshot(page, `${name}-390`);
  }
  await page.context().close();
}, 180_000);

test('a double-click does one thing: one project, one pause (not a pause and then a resume), and no false error', async () => {
  const f = await setupProject();
  await checkIn(f, 'dbl-1');
  const deployment = await startedDeployment(f);
  const page = await signedIn(f);
  const projectsBefore = (await api('GET', '/api/v1/projects/', { token: f.user.token })).body.length as number;
  await page.goto(consoleUrl('/'));
  await page.getByLabel('New project').fill('Clicked twice');
  await page.getByRole('button', { name: 'Create project' }).dblclick();
  await page.getByRole('link', { name: 'Clicked twice' }).first().waitFor();
  await page.waitForTimeout(1_000);
  const projects = (await api('GET', '/api/v1/projects/', { token: f.user.token })).body as Array<{ name: string }>;
  expect(projects.filter((project) => project.name === 'Clicked twice')).toHaveLength(1);
  expect(projects).toHaveLength(projectsBefore + 1);

  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await page.getByRole('button', { name: 'Pause' }).dblclick();
  await expectText(page.locator('h1 .state'), 'paused');
  await page.waitForTimeout(1_000);
  const audit = (await api('GET', `/api/v1/projects/${f.project.id}/audit/?action=deployment`, { token: f.user.token })).body as Array<{ action: string; target_id: string }>;
  expect(audit.filter((event) => event.target_id === deployment.id).map((event) => event.action)).toEqual(['deployment.paused', 'deployment.started', 'deployment.created']);
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/`, { token: f.user.token })).body.state).toBe('paused');
  expect(await page.getByRole('alert').count()).toBe(0);
  await page.context().close();
}, 120_000);

test('a stale tab acts on nothing another tab changed: the action is refused with what the deployment is now, and the page catches up', async () => {
  const f = await setupProject();
  await checkIn(f, 'stale-1');
  const deployment = await startedDeployment(f, { rollout_percentage: 50 });
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await expectText(page.locator('h1 .state'), 'active');
  // Another tab ramps to 100% and pauses, while this one still shows active at 50%.
  const path = `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/transition/`;
  expect((await api('POST', path, { token: f.user.token, json: { action: 'ramp', rollout_percentage: 100 } })).status).toBe(200);
  expect((await api('POST', path, { token: f.user.token, json: { action: 'pause' } })).status).toBe(200);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expectText(page.getByRole('alert'), 'it is now paused at 100%');
  await expectText(page.locator('h1 .state'), 'paused');
  expect((await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/`, { token: f.user.token })).body).toMatchObject({ state: 'paused', rollout_percentage: 100 });
  await page.context().close();
}, 120_000);

test('the rollout page draws how updated devices run against the rest, and says when the health guardrail paused it', async () => {
  const f = await setupProject();
  const fleet = Array.from({ length: 16 }, (_, i) => `health-${i}`);
  const healthCheck = (deviceId: string, build: number, health: Record<string, unknown>) =>
    api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId, { current_build_number: build, health: { reset_reason: 'software', min_free_heap: 150_000, ...health } }) });
  // A day on the old build before the deployment: the reports the next ones are compared with.
  for (const deviceId of fleet) expect((await healthCheck(deviceId, 0, { boots: 1, abnormal_boots: 0, uptime_seconds: 86_400 })).status).toBe(200);
  const deployment = await startedDeployment(f, { rollout_percentage: 50, guardrails: { health_regression: { min_devices: 2, min_device_hours: 10 } } });

  // An hour later every device checks; those offered the build install it.
  const updated: string[] = [];
  for (const deviceId of fleet) {
    const answer = await healthCheck(deviceId, 0, { boots: 1, abnormal_boots: 0, uptime_seconds: 90_000 });
    if (!answer.body.update_available) continue;
    expect((await report(f, deployment.id, deviceId, 'confirmed', { build_number: deployment.build_number })).status).toBe(200);
    updated.push(deviceId);
  }
  expect(updated.length).toBeGreaterThanOrEqual(2);
  expect(fleet.length - updated.length).toBeGreaterThanOrEqual(2);
  // Ten hours on: the updated devices panicked five times each, the rest not at all. A device's
  // hours count no more than the registry's clock saw pass, which the test stack runs 3,600 times
  // faster (HEALTH_TIME_SCALE): six seconds are six hours a device, past min_device_hours on each side.
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  for (const deviceId of fleet) {
    const onBuild = updated.includes(deviceId);
    const health = onBuild ? { reset_reason: 'panic', boots: 6, abnormal_boots: 5, uptime_seconds: 36_000 } : { boots: 1, abnormal_boots: 0, uptime_seconds: 126_000 };
    expect((await healthCheck(deviceId, onBuild ? deployment.build_number : 0, health)).status).toBe(200);
  }

  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await expectText(page.getByTestId('guardrail-pause'), 'Paused by the health guardrail');
  await expectText(page.getByTestId('guardrails'), 'pause when updated devices reset abnormally more than 50% more often than those not yet updated');
  // The figures are the API's, as the guardrail judged them (checks after the pause count no more).
  const health = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/health/`, { token: f.user.token })).body;
  const side = (figures: { devices: number; device_hours: number; abnormal_resets: number; resets_per_1000_device_hours: number }) =>
    `${Math.round(figures.resets_per_1000_device_hours * 10) / 10} per 1,000 h (${figures.abnormal_resets} resets in ${Math.round(figures.device_hours)} h of ${figures.devices} devices)`;
  expect(health.updated.resets_per_1000_device_hours).toBeGreaterThan(100);
  expect(health.previous.abnormal_resets).toBe(0);
  const figures = page.getByTestId('health-figures');
  await expectText(figures, `On build ${deployment.build_number}: ${side(health.updated)}`);
  await expectText(figures, `Not yet updated: ${side(health.previous)}`);
  // Both sides are drawn, a point each in the one period the checks fell in.
  await page.locator('.health-chart .recharts-line-dots circle').nth(1).waitFor();
  await screenshot(page, 'deployment-health-paused-1366');
  // An updated device's own page says how it has run since it installed the build.
  await page.getByRole('link', { name: updated[0], exact: true }).click();
  await expectText(page.getByTestId('device-health'), `last reset: panic · 6 boots (5 abnormal) and 10 h run on build ${deployment.build_number} · lowest free heap 146 KiB`);
  await page.context().close();
}, 120_000);

test('the rollout page says how many devices put the update off and until when, and counts them as no failure', async () => {
  const f = await setupProject();
  expect((await checkIn(f, 'deferring-1')).status).toBe(200);
  const deployment = await startedDeployment(f);
  expect((await checkIn(f, 'deferring-1')).body.update_available).toBe(true);
  const until = new Date(Date.now() + 2 * 3600 * 1000);
  expect((await report(f, deployment.id, 'deferring-1', 'deferred', { deferred_until: until.toISOString(), reason: 'user_busy' })).status).toBe(200);
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await expectText(page.getByTestId('deferred'), '1 device put the update off, the latest until');
  await expectText(page.getByTestId('failure-count'), '0');
  await page.context().close();
}, 60_000);

test('a build that raises secure_version shows it, and its deployment asks with the devices it burns and the raises left', async () => {
  const f = await setupProject({ name: 'eFuse raise' });
  const c3 = { version_label: '3.0.0', framework: 'esp_idf', chip_family: 'esp32c3' };
  for (let i = 0; i < 3; i++) await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(`raise-${i}`, { chip_family: 'esp32c3' }) });
  await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) });
  const raising = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(c3, makeEspImage({ secureVersion: 3 })) })).body;
  expect(raising.secure_version_raise).toEqual({ from: 0, to: 3, efuse_bits_left: 13 });
  const page = await signedIn(f);

  await page.goto(consoleUrl(`/projects/${f.project.id}/artifacts`));
  for (const fact of ['esp32c3 v0.3–v1.99', 'secure version 3', 'raises it from 0: 13 eFuse raises left']) await expectText(page.getByTestId('image-2'), fact);
  await expectText(page.getByRole('row').filter({ hasText: 'not an ESP-IDF image' }), '1');
  await screenshot(page, 'artifacts-images');
  // The project's setting: on, an upload of other bytes is refused.
  await page.getByRole('checkbox', { name: 'Take ESP-IDF application images only' }).check();
  await expectText(page.getByTestId('images-only'), 'Any other binary is refused at upload.');
  // The box shows what was asked at once; the change lands when the answer comes.
  const setting = await eventually(() => api('GET', `/api/v1/projects/${f.project.id}/`, { token: f.user.token }), (read) => read.body.require_esp_image === true);
  expect(setting.body.require_esp_image).toBe(true);
  expect((await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).status).toBe(400);

  await page.getByRole('link', { name: 'Deployments' }).click();
  await page.getByRole('heading', { name: 'New deployment' }).waitFor();
  await page.getByLabel('Build').selectOption(raising.id);
  const warning = page.getByTestId('secure-version-raise');
  await expectText(warning, 'from 0 to 3');
  await expectText(warning, 'up to 3 devices these targets reach now, and the chip keeps 13 more such raises');
  await screenshot(page, 'deployment-secure-version-raise');
  // Not acknowledged, the form does not send: the box is required.
  await page.getByRole('button', { name: 'Create draft' }).click();
  expect(((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token })).body as unknown[]).length).toBe(0);
  await page.getByRole('checkbox', { name: 'I understand that this cannot be undone' }).check();
  // A double-click makes one deployment.
  await page.getByRole('button', { name: 'Create draft' }).dblclick();
  await page.getByRole('button', { name: 'Start' }).waitFor();
  expect(((await api('GET', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token })).body as unknown[]).length).toBe(1);
  await page.close();
});
