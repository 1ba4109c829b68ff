import { MANIFEST, api, eventually, randomBinary, seededRandom, setupProject, uploadForm } from '@ota/testkit';

// The audit's order is the order in which transitions took effect (docs/api.md, "Audit event"):
// many clients steer one deployment at once, and the log read by time must replay as a valid walk
// of the deployment's states, one event per transition that succeeded.

const CLIENTS = 20;
const ROUNDS = 12;
const ACTIONS = ['pause', 'resume', 'ramp'] as const;
const SEED = Number(process.env.OTA_RACE_SEED ?? Math.floor(Math.random() * 2 ** 31));

jest.setTimeout(300_000);

test(`${CLIENTS} clients sending ${CLIENTS * ROUNDS} transitions at once: the audit read by time replays them in the order they took effect`, async () => {
  process.stdout.write(`[audit order] seed ${SEED} (OTA_RACE_SEED=${SEED} repeats it)\n`);
  const next = seededRandom(SEED);
  const f = await setupProject({ name: 'racing transitions' });
  const projectPath = `/api/v1/projects/${f.project.id}`;
  const release = await api('POST', `${projectPath}/release/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) });
  expect(release.status).toBe(201);
  const deploymentId = release.body.deployment_id as string;

  // Each client, with its own API token (each has its own rate limit), sends its transitions one
  // after another, all clients at once.
  const tokens = await Promise.all(
    Array.from({ length: CLIENTS }, async (_, index) => {
      const created = await api('POST', `${projectPath}/tokens/`, { token: f.user.token, json: { name: `client-${index}`, scope: 'api', role: 'admin' } });
      expect(created.status).toBe(201);
      return created.body.token as string;
    }),
  );
  let succeeded = 0;
  const client = async (token: string) => {
    for (let round = 0; round < ROUNDS; round++) {
      const action = ACTIONS[Math.floor(next() * ACTIONS.length)]!;
      const body = action === 'ramp' ? { action, rollout_percentage: 1 + Math.floor(next() * 100) } : { action };
      const answer = await api('POST', `${projectPath}/deployments/${deploymentId}/transition/`, { token, json: body });
      expect([200, 400]).toContain(answer.status);
      if (answer.status === 200) succeeded += 1;
    }
  };
  await Promise.all(tokens.map(client));

  type AuditEvent = { action: string; target_id: string; created_at: string; details: { state: string } };
  const transitions = await eventually(
    async () => {
      const events: AuditEvent[] = [];
      for (let before: string | undefined; ; ) {
        const page = await api('GET', `${projectPath}/audit/?action=deployment&limit=200${before ? `&before=${before}` : ''}`, { token: f.user.token });
        expect(page.status).toBe(200);
        const listed = page.body as Array<AuditEvent & { id: string }>;
        events.push(...listed);
        if (listed.length < 200) break;
        before = listed.at(-1)!.id;
      }
      return events.filter((event) => event.target_id === deploymentId && event.action !== 'deployment.created');
    },
    (events) => events.length >= succeeded,
  );
  expect(transitions).toHaveLength(succeeded);

  // Oldest first, as they took effect; each must be a transition the state before it allows.
  const ordered = [...transitions].sort((a, b) => a.created_at.localeCompare(b.created_at));
  const ALLOWED: Record<string, { from: string[]; to: string | 'same' }> = {
    'deployment.paused': { from: ['active'], to: 'paused' },
    'deployment.resumed': { from: ['paused'], to: 'active' },
    'deployment.ramped': { from: ['active', 'paused'], to: 'same' },
  };
  let state = 'active';
  const walk: string[] = [];
  for (const event of ordered) {
    const rule = ALLOWED[event.action];
    walk.push(`${event.action} from ${state}`);
    expect({ step: walk.length, event: event.action, from: state, allowed: rule?.from.includes(state) ?? false }).toEqual({ step: walk.length, event: event.action, from: state, allowed: true });
    state = rule!.to === 'same' ? state : rule!.to;
    expect(event.details.state).toBe(state);
  }
  const times = new Set(ordered.map((event) => event.created_at));
  expect(times.size).toBe(ordered.length);
  process.stdout.write(`[audit order] ${succeeded} of ${CLIENTS * ROUNDS} transitions succeeded; the audit replays them as a valid walk\n`);
});
