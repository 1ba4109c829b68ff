import type { Browser } from 'playwright-core';
import { api, makeEspSbom, MANIFEST, randomBinary, setupProject, takeOfferedBuild, uploadForm } from '@ota/testkit';
import { consoleUrl, expectText, launchChromium, screenshot, signedInPage } from './browser';

// The console's Vulnerabilities pages (docs/console.md): the advisories recorded, and one's report:
// the devices affected now and each day, and the fix's deployment.

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

test('a vulnerability shows the devices it affects now, the fix rolling out, and its days', async () => {
  const f = await setupProject();
  const base = `/api/v1/projects/${f.project.id}`;
  const release = async (version: string, mbedtls: string) => {
    const released = await api('POST', `${base}/release/`, { token: f.user.token, body: uploadForm({ ...MANIFEST, version_label: version }, randomBinary(128)) });
    expect(released.status).toBe(201);
    const sbom = makeEspSbom({ version, components: [{ name: 'mbedtls', version: mbedtls }], format: 'cyclonedx-json' });
    expect((await api('PUT', `${base}/artifacts/${released.body.artifact_id}/sbom/`, { token: f.user.token, body: sbom })).status).toBe(200);
    return released.body as { build_number: number; deployment_id: string };
  };
  await release('2.0.0', '3.6.2');
  for (const unit of ['u1', 'u2', 'u3']) await takeOfferedBuild(f, unit, 0);
  const recorded = await api('POST', `${base}/vulnerabilities/`, { token: f.user.token, json: { advisory_id: 'CVE-2026-40001', component: { name: 'mbedtls' }, versions: '<3.6.3' } });
  expect(recorded.status).toBe(201);
  const fix = await release('2.0.1', '3.6.3');
  await takeOfferedBuild(f, 'u1', 1);

  const page = await signedInPage(browser, f.user);
  await page.goto(consoleUrl(`/projects/${f.project.id}`));
  await page.getByRole('link', { name: 'Vulnerabilities' }).click();
  await expectText(page.getByRole('table', { name: 'Vulnerabilities' }), 'CVE-2026-40001mbedtls<3.6.3');
  await page.getByRole('link', { name: 'CVE-2026-40001' }).click();
  await expectText(page.getByTestId('vulnerability-headline'), '2 devices affected now (3 when recorded');
  await expectText(page.getByTestId('vulnerability-fix'), `Fix: build ${fix.build_number}, active at 100%`);
  expect(await page.getByRole('link', { name: `build ${fix.build_number}` }).getAttribute('href')).toContain(fix.deployment_id);
  await screenshot(page, 'vulnerability-1366');
  await page.context().close();
});
