import { MANIFEST, api, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// Changing a deployment safely (docs/api.md): a transition sent with the If-Match of what the
// caller saw applies only to that version; one that changed since is a 409 saying what it is now.

let f: ProjectFixture;
let path: string;

beforeAll(async () => {
  f = await setupProject({ name: 'versions' });
  const release = await api('POST', `/api/v1/projects/${f.project.id}/release/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) });
  expect(release.status).toBe(201);
  path = `/api/v1/projects/${f.project.id}/deployments/${release.body.deployment_id}/`;
});

const transition = (body: Record<string, unknown>, ifMatch?: string) =>
  api('POST', `${path}transition/`, { token: f.user.token, json: body, ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }) });

test('a stale tab cannot resume what another tab ramped and paused: 409 with what it is now, and nothing changes', async () => {
  const seen = await api('GET', path, { token: f.user.token });
  expect(seen.status).toBe(200);
  const etag = seen.headers.get('etag')!;
  expect(etag).toBe(`"${seen.body.version}"`);

  // The other tab: pause, ramp, each applied to what it saw.
  const paused = await transition({ action: 'pause' }, etag);
  expect(paused.status).toBe(200);
  expect(paused.headers.get('etag')).toBe(`"${seen.body.version + 1}"`);
  const ramped = await transition({ action: 'ramp', rollout_percentage: 100 }, paused.headers.get('etag')!);
  expect(ramped.status).toBe(200);

  // The stale tab still shows the first version and resumes.
  const stale = await transition({ action: 'resume' }, etag);
  expect(stale.status).toBe(409);
  expect(stale.body.detail).toBe(`the deployment changed since version ${seen.body.version}: it is now paused at 100% (version ${ramped.body.version}); read it again and decide`);
  expect((await api('GET', path, { token: f.user.token })).body).toMatchObject({ state: 'paused', rollout_percentage: 100, version: ramped.body.version });

  // The version bare, as a client generated from the document sends `version`, names it as the ETag does.
  const now = (await api('GET', path, { token: f.user.token })).body.version as number;
  expect((await transition({ action: 'resume' }, String(now - 1))).status).toBe(409);
  const bare = await transition({ action: 'resume' }, String(now));
  expect([bare.status, bare.headers.get('etag')]).toEqual([200, `"${now + 1}"`]);
  expect((await transition({ action: 'pause' }, String(now + 1))).status).toBe(200);

  // Without If-Match, or with *, it applies to whatever the deployment is now.
  expect((await transition({ action: 'resume' }, '*')).status).toBe(200);
  expect((await transition({ action: 'pause' })).status).toBe(200);
});

test('two clicks that both saw the same version apply once; a malformed If-Match is 400', async () => {
  const etag = (await api('GET', path, { token: f.user.token })).headers.get('etag')!;
  const answers = await Promise.all([transition({ action: 'resume' }, etag), transition({ action: 'resume' }, etag)]);
  expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
  // An empty or blank If-Match is no If-Match left out: it names no version, so it is refused too.
  for (const header of ['"3', '3"', '03', 'W/"3"', '"abc"', '"0"', '', '   ']) {
    const answer = await transition({ action: 'pause' }, header);
    expect({ header, status: answer.status }).toEqual({ header, status: 400 });
    expect(answer.body.detail).toEqual(expect.any(String));
  }
});

test('without If-Match, racing transitions apply to whatever the deployment is by then: twenty parallel ramps all land, none is refused for the race', async () => {
  const ramps = await Promise.all(Array.from({ length: 20 }, (_, i) => transition({ action: 'ramp', rollout_percentage: 50 + i })));
  expect(ramps.map((answer) => [answer.status, answer.body.detail])).toEqual(ramps.map(() => [200, undefined]));
  // Each applied once, in some order: the versions they answered are twenty in a row.
  const versions = ramps.map((answer) => answer.body.version as number).sort((a, b) => a - b);
  expect(versions).toEqual(versions.map((_, i) => versions[0]! + i));
});
