import type { Browser } from 'playwright-core';
import { api, KEYCLOAK_CLIENT, setupProject, startExtraGateway, startKeycloak, type ExtraGateway, type Keycloak } from '@ota/testkit';
import { expectText, LAPTOP, launchChromium, screenshot } from './browser';

// Single sign-on in the console (docs/console.md, "Signing in"), in Chromium against a real
// Keycloak on loopback: the sign-in page offers the organisation's account, the provider's own
// sign-in page takes the password, and the person lands in the console with the projects their
// group holds a role in.

let browser: Browser;
let keycloak: Keycloak;
let gateway: ExtraGateway;

beforeAll(async () => {
  browser = await launchChromium();
  keycloak = await startKeycloak();
  gateway = await startExtraGateway({ OIDC_ISSUER: keycloak.issuer, OIDC_CLIENT_ID: KEYCLOAK_CLIENT.id, OIDC_CLIENT_SECRET: KEYCLOAK_CLIENT.secret });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await keycloak?.stop();
});

test('a person signs in with the organisation’s account and sees the projects their group may work on', async () => {
  const owner = await setupProject({ name: 'Greenhouse sensors' });
  expect((await api('POST', `/api/v1/projects/${owner.project.id}/members/`, { token: owner.user.token, json: { group: keycloak.group, role: 'approver', confirm_unseen_group: true } })).status).toBe(200);
  const context = await browser.newContext({ viewport: LAPTOP });
  const page = await context.newPage();
  await page.goto(`${gateway.url}/console/`);
  await page.getByTestId('single-sign-on').waitFor();
  await screenshot(page, 'sign-in-with-sso-1366');
  await page.getByTestId('single-sign-on').click();
  // Keycloak's own page.
  await page.locator('#username').fill(keycloak.people.alice.username);
  await page.locator('#password').fill(keycloak.people.alice.password);
  await page.locator('#kc-login').click();
  await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
  await expectText(page.locator('main'), 'Greenhouse sensors');
  await expectText(page.locator('header'), keycloak.people.alice.email);
  await expectText(page.locator('main'), 'your role: approver');
  // Deleting the project is an admin's: shown, disabled, with why.
  const remove = page.getByRole('button', { name: 'Delete Greenhouse sensors' });
  expect(await remove.isDisabled()).toBe(true);
  expect(await remove.getAttribute('title')).toBe('needs the admin role; yours is approver');
  await screenshot(page, 'signed-in-with-sso-1366');

  await page.goto(`${gateway.url}/console/projects/${owner.project.id}/members`);
  await expectText(page.locator('main'), 'Your role here is approver');
  await context.close();
}, 120_000);
