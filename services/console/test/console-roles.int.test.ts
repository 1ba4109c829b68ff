import type { Browser } from 'playwright-core';
import { MANIFEST, api, checkBody, createUser, randomBinary, setupProject, uploadForm } from '@ota/testkit';
import { consoleUrl, expectText, LAPTOP, launchChromium, screenshot, signedInPage } from './browser';

// docs/api.md, "Roles", in the console: a person sees their role, and what it cannot do is shown
// disabled with the reason, never hidden; an admin grants and revokes roles on the Members page.

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

test('an admin grants a role from the Members page, once however often the button is clicked, and revokes it after asking', async () => {
  const f = await setupProject({ name: 'members' });
  const person = createUser();
  const page = await signedInPage(browser, f.user, LAPTOP);
  let grantsSent = 0;
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith(`/projects/${f.project.id}/members/`)) grantsSent += 1;
  });
  await page.goto(consoleUrl(`/projects/${f.project.id}/members`));
  await expectText(page.getByRole('table'), f.user.email);
  await page.getByLabel('E-mail').fill(person.email);
  await page.getByLabel('as').selectOption('operator');
  await page.getByRole('button', { name: 'Grant' }).dblclick();
  await expectText(page.getByTestId('members-done'), `${person.email} is now operator.`);
  await expectText(page.getByRole('table'), person.email);
  expect(grantsSent).toBe(1);
  const grants = () => api('GET', `/api/v1/projects/${f.project.id}/members/`, { token: f.user.token });
  expect((await grants()).body).toHaveLength(2);
  await screenshot(page, 'members-admin-1366');

  // A grant refused by the API shows its detail.
  await page.getByLabel('E-mail').fill('nobody@example.invalid');
  await page.getByRole('button', { name: 'Grant' }).click();
  await expectText(page.getByRole('alert'), 'no user with e-mail nobody@example.invalid');
  await screenshot(page, 'members-refused-1366');

  await page.getByRole('button', { name: 'Revoke…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke role' }).click();
  await expectText(page.getByTestId('members-done'), `${person.email} holds no role here any more.`);
  expect((await grants()).body).toHaveLength(1);
});

test('a viewer sees the project, its role and every action it may not take, disabled with the reason', async () => {
  const f = await setupProject({ name: 'watched' });
  const viewer = createUser();
  expect((await api('POST', `/api/v1/projects/${f.project.id}/members/`, { token: f.user.token, json: { email: viewer.email, role: 'viewer' } })).status).toBe(200);
  const page = await signedInPage(browser, viewer, LAPTOP);
  await page.goto(consoleUrl('/'));
  await expectText(page.locator('main'), 'watched');

  await page.goto(consoleUrl(`/projects/${f.project.id}/members`));
  await expectText(page.getByTestId('read-only'), 'Your role in this project is viewer');
  expect(await page.getByRole('button', { name: 'Grant' }).isDisabled()).toBe(true);
  expect(await page.getByRole('button', { name: 'Grant' }).getAttribute('title')).toBe('needs the admin role; yours is viewer');
  await screenshot(page, 'members-viewer-1366');

  await page.goto(consoleUrl(`/projects/${f.project.id}/groups`));
  await expectText(page.getByTestId('read-only'), 'needs the operator role');
});

test('an operator may steer a deployment but not pause it: Pause is shown disabled, with why', async () => {
  const f = await setupProject({ name: 'operated' });
  const operator = createUser();
  expect((await api('POST', `/api/v1/projects/${f.project.id}/members/`, { token: f.user.token, json: { email: operator.email, role: 'operator' } })).status).toBe(200);
  expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('unit-1') })).status).toBe(200);
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body as { id: string };
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, { token: f.user.token, json: { artifact_id: artifact.id } });
  const started = await api('POST', `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  expect([started.status, started.body.detail]).toEqual([200, undefined]);

  const page = await signedInPage(browser, operator, LAPTOP);
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments/${created.body.id}`));
  const pause = page.getByRole('button', { name: 'Pause' });
  await expectText(page.getByTestId('approver-note'), 'need the approver role; yours is operator');
  expect(await pause.isDisabled()).toBe(true);
  expect(await pause.getAttribute('title')).toBe('needs the approver role; yours is operator');
  expect(await page.getByRole('button', { name: 'Complete…' }).isEnabled()).toBe(true);
  await screenshot(page, 'deployment-operator-1366');

  // The API holds the same line: an operator's pause is 403, naming the role.
  const refused = await api('POST', `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/transition/`, { token: operator.token, json: { action: 'pause' } });
  expect([refused.status, refused.body.detail]).toEqual([403, "Pausing a deployment needs the approver role in this project; the caller's role is operator"]);
});
