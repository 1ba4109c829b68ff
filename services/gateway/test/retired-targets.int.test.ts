import { MANIFEST, api, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// The invariants that span two services (docs/architecture.md, "Invariants across services"): no
// draft, active or paused deployment of an archived build, and none whose group or channel was
// deleted. Each trial races a deployment's creation against the archive or the deletion of what it
// names, and checks the stored truth after it; exactly one wins: never both, never neither.
// OTA_RACE_TRIALS sets the trials per kind (1,000 for the figure in docs/performance.md).

const TRIALS = Number(process.env.OTA_RACE_TRIALS ?? 60);
const UNFINISHED = ['draft', 'active', 'paused'];

jest.setTimeout(Math.max(300_000, TRIALS * 3 * 1_000));

/**
 * API tokens the trials take turns with: each has its own rate limit (RATE_LIMIT_DEVELOPER_*, 20
 * a second), which one token racing trials back to back would outrun.
 */
const TOKENS = 8;

let f: ProjectFixture;
let artifactId: string;
let projectPath: string;
let tokens: string[];
let turn = 0;

beforeAll(async () => {
  f = await setupProject({ name: 'racing retirements' });
  projectPath = `/api/v1/projects/${f.project.id}`;
  tokens = await Promise.all(
    Array.from({ length: TOKENS }, async (_, index) => {
      const created = await api('POST', `${projectPath}/tokens/`, { token: f.user.token, json: { name: `racer-${index}`, scope: 'api', role: 'admin' } });
      expect(created.status).toBe(201);
      return created.body.token as string;
    }),
  );
  const uploaded = await api('POST', `${projectPath}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(128)) });
  expect(uploaded.status).toBe(201);
  artifactId = uploaded.body.id;
});

const call = (method: string, path: string, json?: unknown) => api(method, `${projectPath}${path}`, { token: tokens[turn++ % TOKENS]!, ...(json === undefined ? {} : { json }) });

async function unfinishedDeployments(): Promise<Array<{ id: string; artifact_id: string; target_group_ids: string[]; target_channel_ids: string[] }>> {
  const listed = await call('GET', '/deployments/');
  expect(listed.status).toBe(200);
  return (listed.body as Array<{ id: string; state: string; artifact_id: string; target_group_ids: string[]; target_channel_ids: string[] }>).filter((deployment) =>
    UNFINISHED.includes(deployment.state),
  );
}

async function cancelAll(): Promise<void> {
  for (const deployment of await unfinishedDeployments()) expect((await call('POST', `/deployments/${deployment.id}/transition/`, { action: 'cancel' })).status).toBe(200);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The two requests of trial `trial`, one started a few milliseconds after the other (0 to 15, by
 * trial; `a` first in half the trials, `b` in the other half), so that the trials sweep the window
 * in which each side's check and write interleave.
 */
function race<A, B>(trial: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  const lag = sleep(trial % 16);
  return trial % 32 < 16 ? Promise.all([a(), lag.then(b)]) : Promise.all([lag.then(a), b()]);
}

/** Both answers of a race are a success, or a refusal that says why (never a 5xx). */
function expectCleanAnswers(trial: string, ...statuses: Array<{ status: number; body: { detail?: string } }>): void {
  for (const answer of statuses) {
    const clean = answer.status < 300 || ([400, 409].includes(answer.status) && typeof answer.body.detail === 'string');
    expect({ trial, status: answer.status, clean }).toEqual({ trial, status: answer.status, clean: true });
  }
}

test(`${TRIALS} races of archiving a build against creating a deployment of it: never a deployment of an archived build`, async () => {
  let both = 0;
  const won = { archive: 0, create: 0, neither: 0 };
  for (let trial = 0; trial < TRIALS; trial++) {
    const create = () => call('POST', '/deployments/', { artifact_id: artifactId });
    const archive = () => call('PATCH', `/artifacts/${artifactId}/`, { archived: true });
    const [created, archived] = await race(trial, create, archive);
    expectCleanAnswers(`archive ${trial}`, created, archived);
    const artifact = (await call('GET', '/artifacts/')).body.find((candidate: { id: string }) => candidate.id === artifactId) as { archived: boolean };
    const deployments = (await unfinishedDeployments()).filter((deployment) => deployment.artifact_id === artifactId);
    expect({ trial, archived: artifact.archived, unfinished: artifact.archived ? deployments.length : 0 }).toEqual({ trial, archived: artifact.archived, unfinished: 0 });
    if (created.status === 201 && archived.status === 200) both += 1;
    else if (created.status === 201) won.create += 1;
    else if (archived.status === 200) won.archive += 1;
    else won.neither += 1;
    await cancelAll();
    if (artifact.archived) expect((await call('PATCH', `/artifacts/${artifactId}/`, { archived: false })).status).toBe(200);
  }
  process.stdout.write(`[retired targets] archive vs create, ${TRIALS} trials: create won ${won.create}, archive won ${won.archive}, both refused ${won.neither}, both succeeded ${both}\n`);
  expect({ both, neither: won.neither }).toEqual({ both: 0, neither: 0 });
});

test(`${TRIALS} races of deleting a group or a channel against creating a deployment that targets it: never a deployment with a deleted target`, async () => {
  let both = 0;
  let neither = 0;
  for (let trial = 0; trial < TRIALS; trial++) {
    const kind = trial % 2 === 0 ? 'groups' : 'channels';
    const target = await call('POST', `/${kind}/`, { name: `racing-${trial}` });
    expect(target.status).toBe(201);
    const targets = kind === 'groups' ? { target_group_ids: [target.body.id] } : { target_channel_ids: [target.body.id] };
    const create = () => call('POST', '/deployments/', { artifact_id: artifactId, ...targets });
    const remove = () => call('DELETE', `/${kind}/${target.body.id}/`);
    const [created, deleted] = await race(trial, create, remove);
    expectCleanAnswers(`${kind} ${trial}`, created, deleted);
    const existing = new Set(((await call('GET', `/${kind}/`)).body as Array<{ id: string }>).map((item) => item.id));
    const dangling = (await unfinishedDeployments()).filter((deployment) => [...deployment.target_group_ids, ...deployment.target_channel_ids].some((id) => id === target.body.id && !existing.has(id)));
    expect({ trial, kind, dangling: dangling.length }).toEqual({ trial, kind, dangling: 0 });
    if (created.status === 201 && deleted.status === 204) both += 1;
    if (created.status !== 201 && deleted.status !== 204) neither += 1;
    await cancelAll();
  }
  process.stdout.write(`[retired targets] delete vs create, ${TRIALS} trials: both succeeded ${both}, both refused ${neither}\n`);
  expect({ both, neither }).toEqual({ both: 0, neither: 0 });
});

test('a refused archive and a refused deletion name the deployments in the way, and nothing is left fenced after them', async () => {
  const group = await call('POST', '/groups/', { name: 'held' });
  const deployment = await call('POST', '/deployments/', { artifact_id: artifactId, target_group_ids: [group.body.id] });
  expect(deployment.status).toBe(201);
  const archive = await call('PATCH', `/artifacts/${artifactId}/`, { archived: true });
  expect(archive.status).toBe(400);
  expect(archive.body.detail).toMatch(/1 draft, active or paused deployment/);
  const deletion = await call('DELETE', `/groups/${group.body.id}/`);
  expect(deletion.status).toBe(409);
  expect(deletion.body.detail).toMatch(/targeted by a deployment/);
  // Refused, they leave nothing behind: a second deployment of the same build and group is created.
  expect((await call('POST', '/deployments/', { artifact_id: artifactId, target_group_ids: [group.body.id] })).status).toBe(201);
  await cancelAll();
  expect((await call('DELETE', `/groups/${group.body.id}/`)).status).toBe(204);
});
