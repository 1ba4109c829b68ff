import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { api, checkBody, eventually, makeCoreDump, makeEspBuild, setupProject, uploadForm } from '@ota/testkit';
import { consoleUrl, expectText, launchChromium, PHONE, screenshot, signedInPage } from './browser';

// The console's Crashes page (docs/console.md): the groups a build's core dumps fell into, and one
// group's backtrace and newest crashes, against the real stack decoding with gdb.

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

test('the Crashes page lists a build\'s crash groups, and a group shows its backtrace and crashes', async () => {
  const f = await setupProject();
  const build = makeEspBuild({ crashCode: true, version: '6.0.0' });
  const manifest = { version_label: '6.0.0', framework: 'esp_idf', chip_family: 'esp32c3' };
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(manifest, build.image) })).body;
  expect((await api('PUT', `/api/v1/projects/${f.project.id}/artifacts/${artifact.id}/elf/`, { token: f.user.token, body: build.elf })).status).toBe(200);
  for (const unit of ['shelf-1', 'shelf-2']) {
    expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(unit, { chip_family: 'esp32c3' }) })).status).toBe(200);
    const dump = makeCoreDump({ elf: build.elf, taskName: 'sensor', stackPadding: unit === 'shelf-1' ? 0 : 8 });
    const sha256 = createHash('sha256').update(dump).digest('hex');
    const sent = await api('POST', `/api/v1/ota/coredump/?device_id=${unit}&sha256=${sha256}&size=${dump.length}&offset=0`, { token: f.deviceScopeToken, body: dump });
    expect(sent.body.complete).toBe(true);
  }
  await eventually(
    async () => (await api('GET', `/api/v1/projects/${f.project.id}/crashes/`, { token: f.user.token })).body as Array<{ decoding: string; count: number }>,
    (groups) => groups.length === 1 && groups[0]!.decoding === 'decoded' && groups[0]!.count === 2,
  );

  const page = await signedInPage(browser, f.user);
  await page.goto(consoleUrl(`/projects/${f.project.id}`));
  await page.getByRole('link', { name: 'Crashes' }).click();
  const table = page.getByRole('table', { name: 'Crash groups' });
  await expectText(table, 'read_sensor ← average_reading ← sensor_task');
  await expectText(table, `Build ${artifact.build_number}`);
  const row = table.getByRole('row').nth(1);
  expect(await row.getByRole('cell').nth(3).textContent()).toBe('2');
  expect(await row.getByRole('cell').nth(4).textContent()).toBe('2');
  await screenshot(page, 'crashes');

  await page.getByRole('link', { name: 'Load access fault' }).click();
  await expectText(page.getByRole('heading', { level: 1 }), 'Load access fault in read_sensor ← average_reading ← sensor_task');
  const backtrace = page.getByRole('table', { name: 'Backtrace of the crashed task' });
  await expectText(backtrace, 'crash.c:');
  await expectText(page.getByRole('table', { name: 'Newest crashes of the group' }), 'sensor');
  await screenshot(page, 'crash-group');

  // The deployment of the build shows its crashes, new in it, against the hours its devices ran.
  const started = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, {
    token: f.user.token,
    json: { artifact_id: artifact.id, target_channel_ids: [f.defaultChannelId], guardrails: { health_regression: {} } },
  });
  expect(started.status).toBe(201);
  expect((await api('POST', `/api/v1/projects/${f.project.id}/deployments/${started.body.id}/transition/`, { token: f.user.token, json: { action: 'start' } })).status).toBe(200);
  // Two checks a device, ten hours apart by their uptime and a second and a half by the clock,
  // which the test stack's registry runs 3,600 times faster (HEALTH_TIME_SCALE): an hour and a half.
  for (const uptime of [36_000, 72_000]) {
    if (uptime > 36_000) await new Promise((resolve) => setTimeout(resolve, 1_500));
    const health = { reset_reason: 'panic', boots: 2, abnormal_boots: 1, uptime_seconds: uptime };
    for (const unit of ['shelf-1', 'shelf-2']) {
      const checked = await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(unit, { chip_family: 'esp32c3', current_build_number: artifact.build_number, health }) });
      expect(checked.status).toBe(200);
    }
  }
  await eventually(
    async () => (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${started.body.id}/health/`, { token: f.user.token })).body as { updated: { device_hours: number } },
    (figures) => figures.updated.device_hours >= 1,
  );
  // A crash after the start: the deployment counts its build's dumps from then on.
  const later = makeCoreDump({ elf: build.elf, taskName: 'sensor', stackPadding: 32 });
  const laterSha = createHash('sha256').update(later).digest('hex');
  expect((await api('POST', `/api/v1/ota/coredump/?device_id=shelf-2&sha256=${laterSha}&size=${later.length}&offset=0`, { token: f.deviceScopeToken, body: later })).body.complete).toBe(true);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${started.body.id}`));
  const section = page.getByRole('region', { name: /Crashes/ });
  await expectText(section.getByRole('table', { name: 'Crash groups of the build' }), 'new in this build');
  await expectText(section.getByTestId('crash-free-hours'), 'device-hours on build');
  // The health guardrail says it does not judge yet, and why: two devices are not twenty.
  await expectText(page.getByTestId('not-judging'), 'Not judging yet: waiting for 2 of 20 devices on the build');
  await screenshot(page, 'deployment-crashes');

  // Narrowed to another build, the page says there is nothing, and holds at a phone's width.
  const phone = await signedInPage(browser, f.user, PHONE);
  await phone.goto(consoleUrl(`/projects/${f.project.id}/crashes?build=00000000-0000-4000-8000-000000000000`));
  await expectText(phone.locator('main'), 'No crashes reported.');
  expect(await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
});
