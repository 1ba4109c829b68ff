import { connectMongo } from '@ota/mongo';
import type { Browser } from 'playwright-core';
import { api, MANIFEST, randomBinary, setupProject, takeOfferedBuild, testStack, uploadForm } from '@ota/testkit';
import { registerModels } from '../../registry/src/adapters/mongo/models';
import { MongoFleetSnapshotStore } from '../../registry/src/adapters/mongo/fleet-snapshot-store';
import { consoleUrl, expectText, launchChromium, PHONE, screenshot, signedInPage } from './browser';

// The console's Fleet page (docs/console.md): devices per build over time as a stacked chart, and
// now in words, for the project, a channel or a group. The snapshots of the past are written to the
// stack's registry database as registry's round writes them: the round runs hourly.

let browser: Browser;
const registryDatabase = () => String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'registry');

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

test('the Fleet page shows how a new build was taken up, per project and per group, with today in words', async () => {
  const f = await setupProject({ name: 'fleet chart' });
  const base = `/api/v1/projects/${f.project.id}`;
  // Ten devices take build 1; seven of them build 2 since.
  const release = async (version: string) =>
    expect((await api('POST', `${base}/release/`, { token: f.user.token, body: uploadForm({ ...MANIFEST, version_label: version }, randomBinary(128)) })).status).toBe(201);
  await release('1.0.0');
  for (let unit = 0; unit < 10; unit += 1) await takeOfferedBuild(f, `unit-${unit}`, 0);
  await release('1.1.0');
  for (let unit = 0; unit < 7; unit += 1) await takeOfferedBuild(f, `unit-${unit}`, 1);
  const group = (await api('POST', `${base}/groups/`, { token: f.user.token, json: { name: 'lab' } })).body;
  const devices = (await api('GET', `${base}/devices/`, { token: f.user.token })).body as Array<{ id: string; device_id: string }>;
  for (const device of devices.filter((entry) => ['unit-0', 'unit-9'].includes(entry.device_id))) {
    expect((await api('POST', `${base}/groups/${group.id}/members/`, { token: f.user.token, json: { device_id: device.id } })).status).toBeLessThan(300);
  }
  // The week before: everyone on build 1, then build 2 taken up day by day.
  const mongo = await connectMongo({ uri: testStack().mongodbUri, database: registryDatabase() });
  const store = new MongoFleetSnapshotStore(registerModels(mongo));
  const hour = 3_600_000;
  const lastHour = Math.floor(Date.now() / hour) * hour;
  for (const [daysAgo, onNew] of [[6, 0], [5, 0], [4, 1], [3, 3], [2, 5], [1, 6]] as const) {
    const at = new Date(lastHour - daysAgo * 24 * hour);
    await store.saveSnapshot({ projectId: f.project.id, scope: { kind: 'project' }, at, builds: [{ buildNumber: 1, devices: 10 - onNew }, ...(onNew > 0 ? [{ buildNumber: 2, devices: onNew }] : [])] });
  }
  await mongo.close();

  const page = await signedInPage(browser, f.user);
  await page.goto(consoleUrl(`/projects/${f.project.id}`));
  await page.getByRole('link', { name: 'Fleet' }).click();
  await expectText(page.getByTestId('fleet-now-2'), 'build 2 (1.1.0)770%');
  await expectText(page.getByTestId('fleet-now-1'), 'build 1 (1.0.0)330%');
  // The chart: one stacked area per build, drawn over the week.
  expect(await page.locator('.fleet-chart .recharts-area').count()).toBe(2);
  await screenshot(page, 'fleet-1366');

  // A group's devices, chosen from the keyboard.
  const which = page.getByRole('combobox', { name: 'Which devices' });
  await which.focus();
  await which.selectOption({ label: 'group lab' });
  await expectText(page.getByTestId('fleet-now-2'), 'build 2 (1.1.0)150%');
  await expectText(page.getByTestId('fleet-now-1'), 'build 1 (1.0.0)150%');
  expect(page.url()).toContain(`scope=group%3A${group.id}`);

  const phone = await signedInPage(browser, f.user, PHONE);
  await phone.goto(consoleUrl(`/projects/${f.project.id}/fleet`));
  await expectText(phone.getByTestId('fleet-now-2'), 'build 2 (1.1.0)');
  await screenshot(phone, 'fleet-phone');
  await page.context().close();
  await phone.context().close();
});
