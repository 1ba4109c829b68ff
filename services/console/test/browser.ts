import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { testStack, type CreatedUser } from '@ota/testkit';

// What the console's browser tests share: Debian's chromium driven by playwright-core, signing in
// by keyboard, waiting for text the console polls for, and screenshots at both widths.

const CHROMIUM = process.env.CONSOLE_TEST_CHROMIUM || '/usr/bin/chromium';
export const LAPTOP = { width: 1366, height: 900 };
export const PHONE = { width: 390, height: 844 };
/** Screenshots for a person to look at after a run (not committed; docs/images holds the README's). */
export const REVIEW_SCREENSHOTS = join(__dirname, '..', '..', '..', '.data', 'console-screenshots');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: "npm test" installs Debian's chromium package (or set CONSOLE_TEST_CHROMIUM).`);
  }
  // As root (CI, containers) Chromium refuses to start with its sandbox.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export async function signIn(page: Page, user: CreatedUser): Promise<void> {
  await page.goto(`${testStack().gatewayUrl}/console/`);
  // By keyboard alone: the token field has the focus, Enter submits.
  await page.getByLabel('Personal token').waitFor();
  await page.keyboard.type(user.token);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
}

/** A page of a new browser context of `viewport`, signed in as `user`. */
export async function signedInPage(browser: Browser, user: CreatedUser, viewport = LAPTOP): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await signIn(page, user);
  return page;
}

/** Waits until the locator's text contains `text` (the console polls the API). */
export async function expectText(locator: Locator, text: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  let seen = '';
  while (Date.now() < deadline) {
    seen = (await locator.textContent({ timeout: 5_000 }).catch(() => '')) ?? '';
    if (seen.includes(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`expected "${text}", the page shows "${seen}"`);
}

/** A full-page screenshot for review, named after what it shows. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(REVIEW_SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(REVIEW_SCREENSHOTS, `${name}.png`), fullPage: true });
}

export const consoleUrl = (path: string) => `${testStack().gatewayUrl}/console${path}`;
