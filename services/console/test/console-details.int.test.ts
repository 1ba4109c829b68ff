import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { MANIFEST, api, checkBody, eventually, makeEspSbom, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';
import { consoleUrl, expectText, LAPTOP, launchChromium, PHONE, screenshot, signedInPage } from './browser';

// What a stranger found wrong in the console's details (docs/console.md): a dialog that cannot tell
// two tokens apart, a click that waits offline and fires later, pages wider than the screen, words
// that misname devices, a Back that shows the wrong range, and a deployments list without its
// targets or progress. Each test drives Chromium against the real stack.

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

const signedIn = (f: ProjectFixture, viewport = LAPTOP): Promise<Page> => signedInPage(browser, f.user, viewport);

const checkIn = (f: ProjectFixture, deviceId: string, token = f.deviceScopeToken) => api('POST', '/api/v1/ota/check/', { token, json: checkBody(deviceId) });

/** How much wider than the window the page is, in CSS pixels (0: it fits). */
const overflow = (page: Page) => page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));

async function deploymentOf(f: ProjectFixture, body: Record<string, unknown> = {}, start = true) {
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id, ...body } });
  expect(created.status).toBe(201);
  if (!start) return created.body as { id: string; build_number: number };
  const started = await api('POST', `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect([started.status, started.body.detail]).toEqual([200, undefined]);
  return started.body as { id: string; build_number: number };
}

test('the revoke dialog says which of two tokens of one name it revokes: prefix, age and last use', async () => {
  const f = await setupProject();
  const make = () => api('POST', `/api/v1/projects/${f.project.id}/tokens/`, { token: f.user.token, json: { name: 'fleet', scope: 'device' } });
  const used = (await make()).body as { token: string; prefix: string };
  const unused = (await make()).body as { token: string; prefix: string };
  expect((await checkIn(f, 'fleet-unit', used.token)).status).toBe(200);
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/tokens`));
  const identities: Record<string, string> = {};
  for (const token of [used, unused]) {
    await page.getByRole('button', { name: `Revoke fleet (${token.prefix}…)` }).click();
    const identity = page.getByRole('dialog').getByTestId('token-identity');
    await expectText(identity, token.prefix);
    identities[token.prefix] = (await identity.textContent()) ?? '';
    await page.getByRole('button', { name: 'Go back' }).click();
  }
  expect(identities[used.prefix]).toContain('last used');
  expect(identities[unused.prefix]).toContain('never used');
});

test('a project token is made with a chosen role and lifetime, and the list shows its maker, role and expiry', async () => {
  const f = await setupProject();
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/tokens`));
  await page.getByLabel('New token').fill('dashboards');
  await page.getByLabel('Role').selectOption('viewer');
  await page.getByLabel('Expires').selectOption({ label: '90 days' });
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByRole('button', { name: 'Done' }).click();
  const row = page.getByTestId('token-dashboards');
  await expectText(row, 'api, viewer');
  await expectText(row, f.user.email);
  const made = ((await api('GET', `/api/v1/projects/${f.project.id}/tokens/`, { token: f.user.token })).body as Array<{ name: string; role: string; expires_at: string; created_by: { email: string } }>).find(
    (token) => token.name === 'dashboards',
  )!;
  expect([made.role, made.created_by.email, Math.round((Date.parse(made.expires_at) - Date.now()) / 86_400_000)]).toEqual(['viewer', f.user.email, 90]);
  await screenshot(page, 'project-tokens-1366');
});

test('offline, a click fails at once with the reason and is never sent when the network returns', async () => {
  const f = await setupProject();
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/tokens`));
  await page.getByLabel('New token').fill('made-offline');
  await page.context().setOffline(true);
  await page.getByRole('button', { name: 'Create token' }).click();
  await expectText(page.getByRole('alert'), 'cannot be reached');
  expect(await page.getByRole('button', { name: 'Create token' }).isEnabled()).toBe(true);
  // Back online: a click held while offline would be sent now; wait a moment for one.
  const sent = page.waitForRequest((request) => request.method() === 'POST' && request.url().includes('/tokens/'), { timeout: 3_000 }).then(
    () => true,
    () => false,
  );
  await page.context().setOffline(false);
  expect(await sent).toBe(false);
  const tokens = await api('GET', `/api/v1/projects/${f.project.id}/tokens/`, { token: f.user.token });
  expect((tokens.body as Array<{ name: string }>).map((token) => token.name)).not.toContain('made-offline');
});

test('the audit page fits the window after a bulk change of 400 devices', async () => {
  const f = await setupProject();
  const group = (await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'wide' } })).body as { id: string };
  const ids = Array.from({ length: 400 }, () => randomUUID());
  expect((await api('POST', `/api/v1/projects/${f.project.id}/groups/${group.id}/members/changes/`, { token: f.user.token, json: { add: ids } })).status).toBe(200);
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/audit`));
  await expectText(page.locator('tbody'), 'Group members changed');
  await screenshot(page, 'audit-bulk-change-1366');
  expect(await overflow(page)).toBe(0);
});

test('the preview fits the window with a 128-character device id, and does not call a rolled-back device outside the percentage', async () => {
  const f = await setupProject();
  const longId = `unit-${'x'.repeat(123)}`;
  for (const id of [longId, 'went-back', 'plain']) expect((await checkIn(f, id)).status).toBe(200);
  const deployment = await deploymentOf(f, { rollout_percentage: 100 });
  expect((await checkIn(f, 'went-back')).body.status).toBe('offered');
  const reported = await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: 'went-back', deployment_id: deployment.id, event: 'rolled_back', reason: 'confirm_timeout' } });
  expect(reported.status).toBeLessThan(300);
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await page.getByRole('button', { name: 'Preview the next checks' }).click();
  const samples = page.getByTestId('preview-samples');
  await expectText(samples, 'went-back');
  const wentBack = samples.locator('div', { hasText: 'went-back' });
  expect(await wentBack.locator('dt').textContent()).not.toMatch(/^outside the percentage$/);
  expect(await wentBack.locator('dt').textContent()).toMatch(/rolled/);
  await screenshot(page, 'preview-long-device-id-1366');
  expect(await overflow(page)).toBe(0);
});

test('a preview read in parts reads them spread over the id space and estimates the whole fleet from the first ones', async () => {
  const f = await setupProject();
  // 32 devices, all of which would be offered the build.
  for (let index = 0; index < 32; index += 1) expect((await checkIn(f, `spread-${index}`)).status).toBe(200);
  const deployment = await deploymentOf(f, { rollout_percentage: 100 });
  const page = await signedIn(f);
  // The first four parts answer; the rest wait until the test has read the page.
  const asked: string[] = [];
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route(/\/preview\/\?id_prefix=/, async (route) => {
    asked.push(new URL(route.request().url()).searchParams.get('id_prefix')!);
    if (asked.length > 4) await released;
    await route.continue();
  });
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await page.getByRole('button', { name: 'Preview the next checks' }).click();
  await expectText(page.getByTestId('preview-caption'), 'in the 25% of the fleet read so far');
  expect(asked.slice(0, 4)).toEqual(['0', '8', '4', 'c']);
  const estimate = page.getByTestId('preview-estimate');
  // Four parts of 16 read: their offered devices times four, in two significant digits.
  const caption = (await page.getByTestId('preview-caption').textContent())!;
  const readSoFar = Number(/^(\d+) devices in the 25% of the fleet read so far/.exec(caption)![1]);
  expect((await estimate.textContent())!).toContain(`would be offered the build, about ${Number((readSoFar * 4).toPrecision(2)).toLocaleString('en-US')}`);
  await screenshot(page, 'preview-estimate-1366');
  release();
  await expectText(page.getByTestId('preview-caption'), '32 devices, as of');
  expect(await estimate.count()).toBe(0);
  expect([...asked].sort()).toEqual([...'0123456789abcdef']);
});

test('Back after Next shows the range of the page it returns to', async () => {
  const f = await setupProject();
  await Promise.all(Array.from({ length: 60 }, (_, index) => checkIn(f, `unit-${String(index).padStart(3, '0')}`)));
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/devices`));
  await expectText(page.getByTestId('device-count'), 'Devices 1–50 of 60');
  // Pages come in the order of the devices' ids: the first page's first device, whichever it is.
  const first = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?limit=1`, { token: f.user.token })).body[0] as { device_id: string };
  await page.getByRole('button', { name: 'Next' }).click();
  await expectText(page.getByTestId('device-count'), 'Devices 51–60 of 60');
  await page.goBack();
  await expectText(page.locator('tbody'), first.device_id);
  await expectText(page.getByTestId('device-count'), 'Devices 1–50 of 60');
  await page.goForward();
  await expectText(page.getByTestId('device-count'), 'Devices 51–60 of 60');
});

test('a 64-character group name breaks no page at 390 px, and the deployments list shows targets and progress', async () => {
  const f = await setupProject();
  const name = `g${'0123456789abcdef'.repeat(4)}`.slice(0, 64);
  const group = (await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name } })).body as { id: string };
  expect((await checkIn(f, 'member-1')).status).toBe(200);
  const device = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?q=member-1`, { token: f.user.token })).body[0] as { id: string };
  expect((await api('POST', `/api/v1/projects/${f.project.id}/groups/${group.id}/members/`, { token: f.user.token, json: { device_id: device.id } })).status).toBeLessThan(300);
  const deployment = await deploymentOf(f, { target_group_ids: [group.id], rollout_percentage: 100 });
  expect((await checkIn(f, 'member-1')).body.status).toBe('offered');
  const confirmed = await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: 'member-1', deployment_id: deployment.id, event: 'confirmed', build_number: deployment.build_number } });
  expect(confirmed.status).toBeLessThan(300);

  const laptop = await signedIn(f);
  await laptop.goto(consoleUrl(`/projects/${f.project.id}/deployments`));
  const row = laptop.locator('tbody tr').first();
  await expectText(row, name);
  await expectText(row, '1 of 1 updated');

  const phone = await signedIn(f, PHONE);
  for (const [path, text] of [
    [`/projects/${f.project.id}/groups`, name],
    [`/projects/${f.project.id}/groups/${group.id}`, name],
    [`/projects/${f.project.id}/devices/${device.id}`, name],
    [`/projects/${f.project.id}/deployments/${deployment.id}`, name],
    [`/projects/${f.project.id}/deployments`, name],
  ] as const) {
    await phone.goto(consoleUrl(path));
    await expectText(phone.locator('main'), text);
    await screenshot(phone, `long-group-name-390${path.replaceAll('/', '-').replace(f.project.id, 'p').replace(group.id, 'g').replace(device.id, 'd').replace(deployment.id, 'dep')}`);
    expect({ path, overflow: await overflow(phone) }).toEqual({ path, overflow: 0 });
  }
});

test('a bulk add to a group under a rollout names the deployment and what it gains, and past 100 devices wants the group typed', async () => {
  const f = await setupProject();
  const ids = Array.from({ length: 130 }, (_, index) => `bulk-${String(index).padStart(3, '0')}`);
  for (let start = 0; start < ids.length; start += 30) await Promise.all(ids.slice(start, start + 30).map((id) => checkIn(f, id)));
  const group = (await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'pilot' } })).body as { id: string };
  const devices = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?limit=1000`, { token: f.user.token })).body as Array<{ id: string; device_id: string }>;
  const members = devices.filter((device) => device.device_id < 'bulk-020').map((device) => device.id);
  expect((await api('POST', `/api/v1/projects/${f.project.id}/groups/${group.id}/members/changes/`, { token: f.user.token, json: { add: members } })).body.added).toBe(20);
  await deploymentOf(f, { target_group_ids: [group.id], rollout_percentage: 50 });
  // Ten devices outside the group run a later build already (confirmed through another rollout):
  // the pilot's build is never offered to them.
  const ahead = ids.slice(120);
  const early = (await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'early' } })).body as { id: string };
  const earlyIds = devices.filter((device) => ahead.includes(device.device_id)).map((device) => device.id);
  expect((await api('POST', `/api/v1/projects/${f.project.id}/groups/${early.id}/members/changes/`, { token: f.user.token, json: { add: earlyIds } })).body.added).toBe(10);
  const later = await deploymentOf(f, { target_group_ids: [early.id] });
  for (const deviceId of ahead) {
    expect((await checkIn(f, deviceId)).body.update_available).toBe(true);
    const confirmed = await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: later.id, event: 'confirmed', build_number: later.build_number } });
    expect(confirmed.status).toBe(200);
  }
  const memberCount = async () => ((await api('GET', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token })).body as Array<{ id: string; member_count: number }>).find((g) => g.id === group.id)!.member_count;

  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/devices`));
  await expectText(page.getByTestId('device-count'), 'of 130');
  await page.getByLabel('Which devices').selectOption({ label: 'all 130 devices of the project' });
  await page.getByLabel('Group to change').selectOption({ label: 'pilot' });
  await page.getByRole('button', { name: 'Add to group…' }).click();
  const dialog = page.getByRole('dialog');
  await expectText(dialog, 'Add all 130 devices of the project to pilot?');
  await expectText(page.getByTestId('bulk-impact'), 'Build 1 (1.0.0), active at 50% gains 110 devices: about 50 of them would be offered the build at their next check (10 already run build 1 or a later one)');
  await screenshot(page, 'bulk-change-impact-1366');
  const confirm = dialog.getByRole('button', { name: 'Add to group' });
  expect(await confirm.isDisabled()).toBe(true);
  // Going back changes nothing.
  await dialog.getByRole('button', { name: 'Go back' }).click();
  expect(await memberCount()).toBe(20);

  await page.getByRole('button', { name: 'Add to group…' }).click();
  await dialog.getByLabel('Type pilot to confirm').fill('pilot');
  await confirm.dblclick();
  await expectText(page.getByTestId('bulk-progress'), 'Added 110 devices to pilot.');
  expect(await memberCount()).toBe(130);
  // The 20 added through the API, and the console's change of every device as one operation.
  const audit = await eventually(
    async () =>
      ((await api('GET', `/api/v1/projects/${f.project.id}/audit/?action=group.members_changed`, { token: f.user.token })).body as Array<{ target_id: string; details: { added: number } }>).filter(
        (event) => event.target_id === group.id,
      ),
    (events) => events.length >= 2,
  );
  expect(audit.map((event) => event.details.added).sort((a, b) => a - b)).toEqual([20, 110]);
});

/** Double-clicks to measure (docs/console.md): 10 in npm test; OTA_DOUBLE_CLICKS=100 for the stated figure. */
const DOUBLE_CLICKS = Number(process.env.OTA_DOUBLE_CLICKS ?? 10);

test(`${DOUBLE_CLICKS} double-clicks on Create token make ${DOUBLE_CLICKS} tokens, each shown once`, async () => {
  const f = await setupProject();
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/tokens`));
  const shown = new Set<string>();
  for (let click = 0; click < DOUBLE_CLICKS; click += 1) {
    await page.getByLabel('New token').fill(`twice-${click}`);
    await page.getByRole('button', { name: 'Create token' }).dblclick();
    shown.add((await page.getByTestId('raw-token').textContent()) ?? '');
    await page.getByRole('button', { name: 'Done' }).click();
  }
  // Whatever a second click would have sent has arrived by the time the list is read.
  await page.waitForLoadState('networkidle');
  const tokens = (await api('GET', `/api/v1/projects/${f.project.id}/tokens/`, { token: f.user.token })).body as Array<{ name: string }>;
  const made = tokens.filter((token) => token.name.startsWith('twice-')).map((token) => token.name);
  process.stdout.write(`[double-clicks] ${DOUBLE_CLICKS} double-clicks on Create token made ${made.length} tokens\n`);
  expect(made.sort()).toEqual(Array.from({ length: DOUBLE_CLICKS }, (_, click) => `twice-${click}`).sort());
  expect(shown.size).toBe(DOUBLE_CLICKS);
}, 300_000);

test('a build shows its delta patches: from which build, and how large against the build', async () => {
  const f = await setupProject();
  const base = `/api/v1/projects/${f.project.id}`;
  const upload = async (bytes: Buffer, version: string) =>
    (await api('POST', `${base}/artifacts/`, { token: f.user.token, body: uploadForm({ ...MANIFEST, version_label: version }, bytes) })).body as { id: string };
  // Two builds that share most of their bytes, as two releases of one firmware do.
  const first = randomBinary(64 * 1024);
  const second = Buffer.concat([first.subarray(0, 40_000), Buffer.from('a one-line change'), first.subarray(40_000)]);
  const [v1, v2] = [await upload(first, '1.0.0'), await upload(second, '1.0.1')];
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/artifacts`));
  // Asked for from the page, ahead of the devices' checks; a double-click asks once.
  await page.getByLabel('Base build for a patch to build 2').selectOption({ label: 'build 1 (1.0.0)' });
  await page.getByRole('form', { name: 'Prepare a patch to build 2' }).getByRole('button', { name: 'Prepare patch' }).dblclick();
  await expectText(page.getByTestId('patches-2'), 'from build 1:');
  await expectText(page.getByTestId('patches-2'), 'saved per device)');
  // A build given an SBOM says which format and how many components, to download as sent.
  const sbom = makeEspSbom({ version: '1.0.1', components: [{ name: 'mbedtls', version: '3.6.2' }], format: 'cyclonedx-json' });
  expect((await api('PUT', `${base}/artifacts/${v2.id}/sbom/`, { token: f.user.token, body: sbom })).status).toBe(200);
  await page.reload();
  await expectText(page.getByTestId('sbom-2'), 'CycloneDX 1.6 4 components');
  const download = await page.getByTestId('sbom-2').getByRole('link').getAttribute('href');
  const fetched = await page.evaluate(async (href) => (await fetch(href!)).text(), download);
  expect(Buffer.from(fetched).equals(sbom)).toBe(true);
  const patches = (await api('GET', `${base}/artifacts/${v2.id}/patches/`, { token: f.user.token })).body as Array<{ base_artifact_id: string }>;
  expect(patches.map((patch) => patch.base_artifact_id)).toEqual([v1.id]);
  await screenshot(page, 'artifacts-patches-1366');
});

test("a rollout's devices come a page at a time, filtered by status, and Previous goes back to the page before", async () => {
  const f = await setupProject();
  const ids = Array.from({ length: 60 }, (_, index) => `paged-${String(index).padStart(2, '0')}`);
  // Known first: a deployment to every device starts only when it reaches some.
  for (const id of ids) expect((await checkIn(f, id)).status).toBe(200);
  const deployment = await deploymentOf(f, { rollout_percentage: 100 });
  for (let start = 0; start < ids.length; start += 20) {
    const answers = await Promise.all(ids.slice(start, start + 20).map((id) => checkIn(f, id)));
    expect(answers.map((answer) => answer.body.status)).toEqual(answers.map(() => 'offered'));
  }
  for (const id of ids.slice(0, 3)) {
    const reported = await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: id, deployment_id: deployment.id, event: 'failed', reason: 'flash_write_failed' } });
    expect(reported.status).toBeLessThan(300);
  }
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  const count = page.getByTestId('state-count');
  await expectText(count, 'Devices 1–50 of 60');
  const rollout = page.getByRole('navigation', { name: 'Pages of devices in this rollout' });
  await rollout.getByRole('button', { name: 'Next' }).click();
  await expectText(count, 'Devices 51–60 of 60');
  await rollout.getByRole('button', { name: 'Previous' }).click();
  await expectText(count, 'Devices 1–50 of 60');
  await page.getByRole('region', { name: 'Devices in this rollout' }).getByLabel('Status').selectOption({ label: 'failed' });
  await expectText(count, 'Devices 1–3 of 3');
  await expectText(page.getByRole('table', { name: 'Per-device rollout states' }), 'paged-00');
  await screenshot(page, 'rollout-devices-failed-1366');
});

test('a paused plan says it moves on when resumed, and what just happened happened now', async () => {
  const f = await setupProject();
  expect((await checkIn(f, 'plan-unit')).status).toBe(200);
  const deployment = await deploymentOf(f, { stages: [{ percentage: 10, min_wait_seconds: 60 }, { percentage: 100, min_wait_seconds: 0 }] });
  const path = `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/transition/`;
  expect((await api('POST', path, { token: f.user.token, json: { action: 'pause' } })).status).toBe(200);
  // Paused, its plan moves nowhere: not "by itself in a minute", nor later "2 minutes ago".
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await expectText(page.getByTestId('next-stage'), 'next stage when resumed');
  expect(await page.getByTestId('next-stage').textContent()).not.toMatch(/ago/);
  expect(await page.locator('dd', { has: page.locator('time') }).filter({ hasText: /Dec|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov/ }).last().textContent()).not.toMatch(/in \d+ seconds/);
  await page.context().close();
});

test("a device's page does not put one build's number beside another build's SHA-256 without saying so", async () => {
  const f = await setupProject();
  const previousImage = 'a'.repeat(64);
  const checkWithHash = () => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('hash-unit', { current_hash: previousImage }) });
  expect((await checkWithHash()).status).toBe(200);
  const deployment = await deploymentOf(f);
  const offered = await checkWithHash();
  expect(offered.body.update_available).toBe(true);
  const confirmed = await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: 'hash-unit', deployment_id: deployment.id, event: 'confirmed', build_number: deployment.build_number } });
  expect(confirmed.status).toBe(200);
  const [device] = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?q=hash-unit`, { token: f.user.token })).body;
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/devices/${device.id}`));
  await expectText(page.getByTestId('device-hash'), `not build ${deployment.build_number}'s`);
  await page.context().close();
});

test('the headline and the preview say a closed maintenance window holds the devices, until when, in both zones', async () => {
  const f = await setupProject();
  expect((await checkIn(f, 'window-unit')).status).toBe(200);
  // Tomorrow in Tokyo, from 03:00 for an hour: closed now whatever the hour.
  const dayInTokyo = new Date(Date.now() + 9 * 3_600_000 + 86_400_000).getUTCDay();
  const days = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
  const deployment = await deploymentOf(f, { maintenance_windows: { time_zone: 'Asia/Tokyo', windows: [{ days: [days[dayInTokyo]], start: '03:00', duration_minutes: 60 }] } });
  const page = await signedIn(f);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  await expectText(page.getByTestId('not-offered-why'), 'held by the maintenance window until');
  await expectText(page.getByTestId('not-offered-why'), "03:00 in Asia/Tokyo, the window's zone");
  expect(await page.getByTestId('not-offered-why').textContent()).not.toContain('waiting for their next check');
  await page.getByRole('button', { name: 'Preview the next checks' }).click();
  await expectText(page.getByTestId('preview-held'), 'The 1 offered are held by the maintenance window until');
  await page.context().close();
});

test("a device's timeline says whether its download came as a delta patch, in full, or in full after a patch failed; the deployment counts them", async () => {
  const f = await setupProject();
  const units = { 'delta-applied': { delta: 'applied', patch_bytes: 20 }, 'delta-fell-back': { delta: 'fell_back', delta_failure: 'patch_corrupt' }, 'delta-none': undefined };
  for (const unit of Object.keys(units)) expect((await checkIn(f, unit)).status).toBe(200);
  const deployment = await deploymentOf(f);
  const page = await signedIn(f);
  const expected = { 'delta-applied': 'as a delta patch of 20 B', 'delta-fell-back': 'in full, after the delta patch failed (patch_corrupt)', 'delta-none': 'in full' };
  for (const [unit, detail] of Object.entries(units)) {
    expect((await checkIn(f, unit)).body.update_available).toBe(true);
    const reported = await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: unit, deployment_id: deployment.id, event: 'downloaded', ...(detail ? { detail } : {}) } });
    expect(reported.status).toBe(200);
    const [device] = (await api('GET', `/api/v1/projects/${f.project.id}/devices/?q=${unit}`, { token: f.user.token })).body;
    await page.goto(consoleUrl(`/projects/${f.project.id}/devices/${device.id}`));
    await expectText(page.getByTestId('download-kind'), expected[unit as keyof typeof expected]);
  }
  // The deployment's page counts the three ways, and what the patch saved of the 64-byte build.
  const downloads = await api('GET', `/api/v1/projects/${f.project.id}/deployments/${deployment.id}/downloads/`, { token: f.user.token });
  expect(downloads.body).toEqual({ patched: 1, whole: 1, fell_back: 1, patch_bytes: 20, build_bytes: 64, bytes_saved: 44 });
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${deployment.id}`));
  for (const words of ['1 as a delta patch', '1 whole', '1 whole after a patch failed', 'deltas saved 44 B']) await expectText(page.getByTestId('deployment-downloads'), words);
  await screenshot(page, 'deployment-downloads-1366');
  await page.context().close();
});
