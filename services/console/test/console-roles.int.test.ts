import type { Browser } from 'playwright-core';
import { MANIFEST, api, checkBody, createUser, grantRole, randomBinary, setupProject, uploadForm } from '@ota/testkit';
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

test('an admin invites a person from the Members page, once however often the button is clicked; the person accepts on their Projects page, sees the trail, and leaves', async () => {
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
  await page.getByRole('button', { name: 'Invite' }).dblclick();
  await expectText(page.getByTestId('members-done'), `Invited ${person.email} as operator`);
  await expectText(page.getByTestId(`member-invitation:${person.email}`), 'invited, not accepted yet');
  expect(grantsSent).toBe(1);
  // An address no one has is answered the same way: the page learns nothing of who is registered.
  await page.getByLabel('E-mail').fill('nobody@example.invalid');
  await page.getByRole('button', { name: 'Invite' }).click();
  await expectText(page.getByTestId('members-done'), 'Invited nobody@example.invalid as operator');

  // A group no one has signed in with is asked about first.
  await page.getByLabel('To').selectOption('group');
  await page.getByLabel('Group').fill('platfrom-ops');
  await page.getByRole('button', { name: 'Grant' }).click();
  await expectText(page.getByRole('dialog'), 'no one has signed in with the group "platfrom-ops" yet');
  await page.getByRole('dialog').getByRole('button', { name: 'Go back' }).click();
  const grants = () => api('GET', `/api/v1/projects/${f.project.id}/members/`, { token: f.user.token });
  expect(((await grants()).body as Array<{ kind: string }>).filter((member) => member.kind === 'group')).toEqual([]);
  await screenshot(page, 'members-admin-1366');

  // The person accepts on their Projects page.
  const personPage = await signedInPage(browser, person, LAPTOP);
  await personPage.goto(consoleUrl('/'));
  await expectText(personPage.getByTestId('invitations'), 'members');
  await screenshot(personPage, 'projects-invitation-1366');
  await personPage.getByTestId('invitations').getByRole('button', { name: 'Accept' }).dblclick();
  await expectText(personPage.getByTestId('own-projects'), 'your role: operator');
  expect(((await grants()).body as Array<{ kind: string; email?: string }>).find((member) => member.email === person.email)?.kind).toBe('user');

  // The owner's trail names who joined, with the role and how each actor signed in; filtered to role changes.
  await page.goto(consoleUrl(`/projects/${f.project.id}/audit?action=member`));
  await expectText(page.getByRole('table'), 'Member joined');
  await expectText(page.getByRole('table'), `${f.user.email} as admin · console, with a personal token`);
  await screenshot(page, 'audit-members-1366');

  // Anyone may leave.
  await personPage.goto(consoleUrl(`/projects/${f.project.id}/members`));
  await personPage.getByRole('button', { name: 'Leave this project…' }).click();
  await personPage.getByRole('dialog').getByRole('button', { name: 'Leave project' }).click();
  await expectText(personPage.locator('main'), 'ask an admin of a project to invite');
  expect(((await grants()).body as Array<{ email?: string }>).some((member) => member.email === person.email)).toBe(false);
});

test('a viewer sees the project, its role and every action it may not take, disabled with the reason', async () => {
  const f = await setupProject({ name: 'watched' });
  const viewer = createUser();
  await grantRole(f, viewer, 'viewer');
  const page = await signedInPage(browser, viewer, LAPTOP);
  await page.goto(consoleUrl('/'));
  await expectText(page.locator('main'), 'watched');

  await page.goto(consoleUrl(`/projects/${f.project.id}/members`));
  await expectText(page.getByTestId('read-only'), 'Your role in this project is viewer');
  expect(await page.getByRole('button', { name: 'Invite' }).isDisabled()).toBe(true);
  expect(await page.getByRole('button', { name: 'Invite' }).getAttribute('title')).toBe('needs the admin role; yours is viewer');
  await screenshot(page, 'members-viewer-1366');

  await page.goto(consoleUrl(`/projects/${f.project.id}/groups`));
  await expectText(page.getByTestId('read-only'), 'needs the operator role');
  // Whole forms are shown with every control disabled, never hidden.
  expect(await page.getByRole('button', { name: 'Create group' }).isDisabled()).toBe(true);
  expect(await page.getByTestId('disabled-controls').first().getAttribute('title')).toBe('needs the operator role; yours is viewer');
  await page.goto(consoleUrl(`/projects/${f.project.id}/deployments`));
  await expectText(page.getByTestId('read-only'), 'creating a deployment needs the operator role');
  expect(await page.getByRole('button', { name: 'Create draft' }).isDisabled()).toBe(true);
  await page.goto(consoleUrl(`/projects/${f.project.id}/tokens`));
  expect(await page.getByRole('button', { name: 'Create token' }).isDisabled()).toBe(true);
});

test('an operator may pause, but not go around a hold: a held build\'s Start and a guardrail pause\'s Resume are disabled with why, and an approver is asked by name', async () => {
  const f = await setupProject({ name: 'operated' });
  const [operator, approver] = [createUser(), createUser()];
  for (const [person, role] of [[operator, 'operator'], [approver, 'approver']] as const) await grantRole(f, person, role);
  expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('unit-1') })).status).toBe(200);
  const deployments = `/api/v1/projects/${f.project.id}/deployments/`;
  const deploy = async (artifactId: string, json: object = {}) => {
    const created = await api('POST', deployments, { token: f.user.token, json: { artifact_id: artifactId, ...json } });
    const started = await api('POST', `${deployments}${created.body.id}/transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
    expect([started.status, started.body.detail]).toEqual([200, undefined]);
    return created.body.id as string;
  };
  const upload = async () => (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body.id as string;

  // An operator pauses.
  const steady = await deploy(await upload());
  const operatorPage = await signedInPage(browser, operator, LAPTOP);
  await operatorPage.goto(consoleUrl(`/projects/${f.project.id}/deployments/${steady}`));
  await operatorPage.getByRole('button', { name: 'Pause' }).click();
  await expectText(operatorPage.locator('h1 .state'), 'paused');

  // A guardrail pauses a deployment of a second build: its resume, and a start of the build beside it, are an approver's.
  const crashing = await upload();
  const guarded = await deploy(crashing, { guardrails: { failure_threshold: { percent: 50, min_finished: 1 } } });
  expect((await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: 'unit-1', deployment_id: guarded, event: 'failed', reason: 'flash_write_error' } })).status).toBe(200);
  await operatorPage.goto(consoleUrl(`/projects/${f.project.id}/deployments/${guarded}`));
  await expectText(operatorPage.getByTestId('approver-note'), 'Resuming after a guardrail pause: this needs the approver role; yours is operator');
  expect(await operatorPage.getByRole('button', { name: 'Resume' }).getAttribute('title')).toBe('needs the approver role; yours is operator');
  expect(await operatorPage.getByRole('button', { name: 'Resume' }).isDisabled()).toBe(true);

  const beside = (await api('POST', deployments, { token: f.user.token, json: { artifact_id: crashing } })).body.id as string;
  await operatorPage.goto(consoleUrl(`/projects/${f.project.id}/deployments/${beside}`));
  await expectText(operatorPage.getByTestId('build-holds'), `deployment ${guarded} was paused by its failure_threshold guardrail`);
  expect(await operatorPage.getByRole('button', { name: 'Start' }).isDisabled()).toBe(true);
  await screenshot(operatorPage, 'deployment-held-operator-1366');
  const refused = await api('POST', `${deployments}${beside}/transition/`, { token: operator.token, json: { action: 'start', confirm_all: true } });
  expect([refused.status, refused.body.detail]).toEqual([403, expect.stringContaining('needs the approver role')]);

  // The approver is asked, with the holds named, and the start says what it went around.
  const approverPage = await signedInPage(browser, approver, LAPTOP);
  await approverPage.goto(consoleUrl(`/projects/${f.project.id}/deployments/${beside}`));
  // The page has read the holds before the click (a click before would be answered by the API's 400, naming them).
  await expectText(approverPage.getByTestId('build-holds'), `deployment ${guarded} was paused`);
  await approverPage.getByRole('button', { name: 'Start' }).click();
  const dialog = approverPage.getByRole('dialog');
  await expectText(dialog, 'although it is held');
  await expectText(dialog, 'was paused by its failure_threshold guardrail');
  await dialog.getByRole('button', { name: 'Start, going around the holds' }).click();
  await expectText(approverPage.locator('h1 .state'), 'active');
  const audit = (await api('GET', `/api/v1/projects/${f.project.id}/audit/?action=deployment.started`, { token: f.user.token })).body as Array<{ target_id: string; details: Record<string, unknown> }>;
  expect(audit.find((event) => event.target_id === beside)?.details.overridden_holds).toEqual([expect.objectContaining({ deployment_id: guarded, kind: 'guardrail_pause' })]);

  // Resuming the guardrail's pause states the percentage it resumes at.
  await approverPage.goto(consoleUrl(`/projects/${f.project.id}/deployments/${guarded}`));
  await approverPage.getByRole('button', { name: 'Resume' }).click();
  await expectText(approverPage.getByRole('dialog'), 'Resume at 100%?');
  await approverPage.getByRole('dialog').getByRole('button', { name: 'Resume at 100%' }).click();
  await expectText(approverPage.locator('h1 .state'), 'active');
});
