import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MANIFEST, STACK_ENV_KEY, api, createUser, eventually, findTokensInLogs, randomBinary, uploadForm, WebhookReceiver, type TestStack } from '@ota/testkit';
import { Ledger, MixedLoad, brokenAnswers, call, checkStoredStatuses, startFaultStack, summarize, wrongBuilds, type FaultStack, type Outage } from '../src';

// Fault injection under a mixed fleet and developer load (docs/security.md, "Faults"): each
// service killed with SIGKILL and started again, FerretDB down for 10 s, NATS down for 30 s, S3
// down during an upload. What must hold is checked at the end over everything the load saw.

const rootDir = join(__dirname, '..', '..', '..');
/** The gateway's REQUEST_TIMEOUT_MS default; a JSON request unanswered after this plus slack is a hang. */
const REQUEST_TIMEOUT_MS = 10_000;
const DEADLINE_MS = REQUEST_TIMEOUT_MS + 5_000;
const TRANSFER_DEADLINE_MS = 120_000;
const RECOVERY_LIMIT_MS = 120_000;
/** Every process of the fault stack that holds a MongoDB connection, by its log's name. */
const STORE_CLIENTS = ['registry', 'registry-2', 'artifacts', 'rollout', 'rollout-2', 'telemetry', 'gateway', 'gateway-2'];

let faults: FaultStack;
let load: MixedLoad;
const ledger = new Ledger();
const outages: Outage[] = [];
let projectId: string;
let ownerToken: string;
let fleetToken: string;
const phases: string[] = [];

// A webhook on the project, whose receiver (in this process) refuses the first attempt of every
// delivery, and holds the attempts made while `holding`: telemetry is killed with one in flight.
const WEBHOOK_EVENTS = ['artifact.uploaded', 'release.created', 'deployment.ramped'];
let receiver: WebhookReceiver;
let webhookSecret: string;
let holding = false;
let heldDeliveryId = '';

function progress(message: string): void {
  process.stderr.write(`[faults +${Math.round(process.uptime())}s] ${message}\n`);
}

/** Until both gateways are ready and serve a device check end to end; throws with the last failure. */
async function waitForRecovery(): Promise<number> {
  const startedAt = Date.now();
  let last = '';
  for (;;) {
    const answers = await Promise.all(
      faults.gatewayUrls.map(async (url) => {
        try {
          const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
          if (ready.status !== 200) return `${url}/readyz: ${ready.status} ${await ready.text()}`;
          const check = await fetch(`${url}/api/v1/ota/check/`, {
            method: 'POST',
            headers: { authorization: `Bearer ${fleetToken}`, 'content-type': 'application/json' },
            body: JSON.stringify({ device_id: 'recovery-probe', framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 }),
            signal: AbortSignal.timeout(DEADLINE_MS),
          });
          return check.status === 200 ? '' : `${url} check: ${check.status} ${await check.text()}`;
        } catch (error) {
          return `${url}: ${(error as Error).message}`;
        }
      }),
    );
    last = answers.filter(Boolean).join('; ');
    if (!last) return Date.now() - startedAt;
    if (Date.now() - startedAt > RECOVERY_LIMIT_MS) throw new Error(`no recovery within ${RECOVERY_LIMIT_MS} ms: ${last}`);
    await sleep(500);
  }
}

/** Kills `name` with SIGKILL, starts it again after `downMs` (as Kubernetes would), and waits for recovery. */
async function crash(name: string, downMs: number, whileDown?: () => Promise<void>): Promise<void> {
  const before = faults.pids();
  const from = Date.now();
  await faults.kill(name);
  progress(`${name} killed (SIGKILL); back in ${downMs / 1000} s`);
  // The process comes back even when what was checked meanwhile failed, so that one failure does
  // not leave the rest of the suite without it.
  try {
    const work = whileDown?.();
    await sleep(downMs);
    await work;
  } finally {
    await faults.relaunch(name);
  }
  const recoveredAfter = await waitForRecovery();
  outages.push({ process: name, from, to: Date.now() });
  phases.push(`${name}: down ${downMs / 1000} s, serving again ${(recoveredAfter / 1000).toFixed(1)} s after its relaunch`);
  progress(phases.at(-1)!);
  // Only the killed process was started again: every other one kept its pid, so it recovered by itself.
  const after = faults.pids();
  const restarted = [...before].filter(([process, pid]) => process !== name && after.get(process) !== pid).map(([process]) => process);
  expect(restarted).toEqual([]);
  // Healthy load between faults.
  await sleep(3_000);
}

beforeAll(async () => {
  progress('starting the stack (FerretDB on PostgreSQL, nats-server, s3rver, the services, a second registry, rollout and gateway)');
  // Webhook receivers here listen on 127.0.0.1, and a delivery whose attempt died with telemetry is
  // tried again 3 + 5 s later (its claim lapses after WEBHOOK_TIMEOUT_MS and 5 s).
  faults = await startFaultStack(rootDir, { WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true', WEBHOOK_RETRY_BASE_MS: '500', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_POLL_INTERVAL_MS: '200' });
  const published: TestStack = {
    gatewayUrl: faults.stack.gatewayUrl,
    mongodbUri: faults.stack.mongodbUri,
    postgresUrl: faults.stack.postgresUrl,
    s3Endpoint: faults.stack.s3Endpoint,
    natsUrl: faults.stack.natsUrl,
    gatewayEnv: faults.stack.gatewayEnv,
    metricsUrls: faults.stack.metricsUrls,
    logDir: faults.logDir,
    issuedTokensFile: join(faults.logDir, '..', 'issued-tokens.txt'),
  };
  process.env[STACK_ENV_KEY] = JSON.stringify(published);
  const owner = createUser({ maxDevices: 0, maxUploadsPerMonth: 0 });
  ownerToken = owner.token;
  const project = await api('POST', '/api/v1/projects/', { token: ownerToken, json: { name: 'fault suite' } });
  projectId = project.body.id;
  fleetToken = (await api('POST', `/api/v1/projects/${projectId}/tokens/`, { token: ownerToken, json: { name: 'fleet', scope: 'device' } })).body.token;
  receiver = await WebhookReceiver.start((_, attempt) => (holding ? 'hold' : attempt === 1 ? 503 : 200));
  const webhook = await api('POST', `/api/v1/projects/${projectId}/webhooks/`, { token: ownerToken, json: { url: receiver.url, events: WEBHOOK_EVENTS } });
  expect(webhook.status).toBe(201);
  webhookSecret = webhook.body.secret;
  load = new MixedLoad({
    gateways: faults.gatewayUrls,
    ledger,
    projectId,
    fleetToken,
    developerToken: ownerToken,
    devices: 40,
    deadlineMs: DEADLINE_MS,
    transferDeadlineMs: TRANSFER_DEADLINE_MS,
  });
  expect(await load.release(0)).toBeDefined();
  load.start();
  progress(`load running; logs in ${faults.logDir}`);
  await sleep(5_000);
}, 180_000);

afterAll(async () => {
  await load?.stop();
  await faults?.stop();
  await receiver?.close();
}, 120_000);

describe('under a mixed fleet and developer load', () => {
  for (const service of ['registry', 'artifacts', 'rollout', 'telemetry', 'gateway'] as const) {
    test(`${service} killed with SIGKILL and started again: the rest recover without a restart`, async () => {
      if (service !== 'telemetry') return crash(service, 3_000);
      // Killed mid-delivery: an upload's webhook delivery is held by the receiver when telemetry dies.
      holding = true;
      const attemptsBefore = receiver.attempts.length;
      const upload = await api('POST', `/api/v1/projects/${projectId}/artifacts/`, { token: ownerToken, body: uploadForm({ ...MANIFEST, version_label: 'webhook-in-flight' }, randomBinary(256)) });
      expect(upload.status).toBe(201);
      ledger.mutations.push({ projectId, action: 'artifact.uploaded', targetId: upload.body.id });
      const held = await eventually(
        async () => receiver.attempts.slice(attemptsBefore).find((attempt) => attempt.answered === 0 && JSON.parse(attempt.body).audit_event.target_id === upload.body.id),
        (attempt) => attempt !== undefined,
        30_000,
      );
      expect(held).toBeDefined();
      heldDeliveryId = held!.id;
      progress(`webhook delivery ${heldDeliveryId} in flight (held by the receiver) as telemetry is killed`);
      await crash(service, 3_000, async () => {
        holding = false;
      });
    });
  }

  test('FerretDB stopped for 10 s: every process loses it, and has it back without a restart', async () => {
    const logged = () => new Map(STORE_CLIENTS.map((name) => [name, readFileSync(join(faults.logDir, `${name}.log`), 'utf8')]));
    const before = logged();
    await crash('ferretdb', 10_000);
    // Each process's MongoDB driver reports losing the server and having it back (libs/mongo's
    // reportReachability); one that never has it back is stuck, whatever its requests show.
    const giveUpAt = Date.now() + RECOVERY_LIMIT_MS;
    let stuck: string[] = [];
    do {
      const now = logged();
      stuck = STORE_CLIENTS.filter((name) => {
        const since = now.get(name)!.slice(before.get(name)!.length);
        return !since.includes('MongoDB server unreachable') || since.lastIndexOf('MongoDB server reachable again') < since.lastIndexOf('MongoDB server unreachable');
      });
      if (stuck.length === 0) break;
      await sleep(1_000);
    } while (Date.now() < giveUpAt);
    // Named with whether it is still running and what it logged since, so that a failure says why.
    const alive = faults.pids();
    const described = stuck.map((name) => {
      const since = logged().get(name)!.slice(before.get(name)!.length).trim().split('\n');
      return `${name} (${alive.get(name) === undefined ? 'exited' : 'running'}), its last lines:\n${since.slice(-8).join('\n')}`;
    });
    expect(described).toEqual([]);
    // A driver that stopped checking is mended by reopening its client (libs/mongo's superviseDriver).
    const reopened = STORE_CLIENTS.filter((name) => logged().get(name)!.slice(before.get(name)!.length).includes('MongoDB client reopened'));
    if (reopened.length > 0) progress(`MongoDB client reopened after the driver stopped checking: ${reopened.join(', ')}`);
  });

  test('NATS stopped for 30 s: a pause made meanwhile reaches the other registry and rollout replicas, and the two views agree again', async () => {
    const paused = load.deployments.at(-1)!;
    load.holdReleases = true;
    await crash('nats', 30_000, async () => {
      await sleep(2_000);
      const answer = await call(ledger, faults.gatewayUrls, 0, 'POST', `/api/v1/projects/${projectId}/deployments/${paused}/transition/`, {
        token: ownerToken,
        json: { action: 'pause' },
        deadlineMs: DEADLINE_MS,
      });
      // Acknowledged while NATS is away: its audit event waits in the gateway's outbox.
      expect(answer?.status).toBe(200);
      ledger.mutations.push({ projectId, action: 'deployment.paused', targetId: paused });
    });
    // The second replica learns of the pause over NATS or by reloading on reconnect; until then it
    // may still offer the paused build. Both replicas must end up giving the same answer.
    const probe = { device_id: 'convergence-probe', framework: 'esp_idf', chip_family: 'esp32', current_build_number: 0 };
    let answers: Array<string | undefined> = [];
    const giveUpAt = Date.now() + 60_000;
    do {
      answers = await Promise.all(
        [0, 1].map(async (gateway) => {
          const answer = await call(ledger, faults.gatewayUrls, gateway, 'POST', '/api/v1/ota/check/', { token: fleetToken, json: probe, deadlineMs: DEADLINE_MS });
          return answer?.status === 200 ? `${answer.body.status}:${answer.body.deployment_id ?? ''}` : undefined;
        }),
      );
      if (answers[0] && answers[0] === answers[1]) break;
      await sleep(500);
    } while (Date.now() < giveUpAt);
    expect(answers[1]).toBe(answers[0]);
    expect(answers[0]).not.toContain(paused);
    load.holdReleases = false;
  });

  test('S3 stopped during an upload: 503 with Retry-After, nothing stored, no build number burned', async () => {
    load.holdReleases = true;
    const artifactsBefore = (await api('GET', `/api/v1/projects/${projectId}/artifacts/`, { token: ownerToken })).body as Array<{ build_number: number }>;
    const highestBefore = Math.max(...artifactsBefore.map((artifact) => artifact.build_number));
    // 24 MiB sent at about 8 MiB/s, so that S3 goes away while the bytes are on their way.
    const upload = slowUpload(0, 24, 8);
    await sleep(1_500);
    const from = Date.now();
    await faults.kill('s3rver');
    progress('s3rver killed during an upload');
    const refused = await upload;
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBeTruthy();
    const artifactsDuring = (await api('GET', `/api/v1/projects/${projectId}/artifacts/`, { token: ownerToken })).body as unknown[];
    expect(artifactsDuring).toHaveLength(artifactsBefore.length);
    await sleep(2_000);
    await faults.relaunch('s3rver');
    await waitForRecovery();
    outages.push({ process: 's3rver', from, to: Date.now() });
    const accepted = await slowUpload(0, 1, 1_000);
    expect(accepted.status).toBe(201);
    expect(accepted.body.build_number).toBe(highestBefore + 1);
    ledger.mutations.push({ projectId, action: 'artifact.uploaded', targetId: accepted.body.id });
    phases.push('s3rver: killed during a 24 MiB upload, which got 503; the retried upload took the next build number');
    load.holdReleases = false;
    await sleep(3_000);
  });
});

describe('afterwards, over everything the load saw', () => {
  beforeAll(async () => {
    await load.stop();
    progress(`load stopped: ${ledger.requests.length} requests, ${ledger.statusReports.length} status reports, ${ledger.mutations.length} acknowledged mutations`);
    progress(`answers by endpoint:\n${summarize(ledger)}`);
    progress(`phases:\n${phases.join('\n')}`);
    const cut = ledger.requests.filter((record) => record.outcome === 'network');
    progress(`broken connections (allowed only while a process behind them was down): ${cut.length}\n${cut.slice(0, 15).map((record) => `${new Date(record.at).toISOString()} gateway ${record.gateway} ${record.method} ${record.path}: ${record.detail}`).join('\n')}`);
  }, 120_000);

  test('every request was answered before its deadline, and what could not be served got 503 with Retry-After', () => {
    const broken = brokenAnswers(ledger, outages);
    expect(broken.slice(0, 20)).toEqual([]);
    // The faults were felt: some requests were refused, so the load overlapped them.
    expect(ledger.requests.filter((record) => record.outcome === 503).length).toBeGreaterThan(0);
  });

  test('every status report answered accepted: true is stored exactly once', async () => {
    const devices = (await api('GET', `/api/v1/projects/${projectId}/devices/`, { token: ownerToken })).body as Array<{ id: string; device_id: string; current_build_number: number }>;
    const problems = await checkStoredStatuses(faults.stack.mongodbUri, faults.databaseOf('rollout'), ledger, new Map(devices.map((device) => [device.device_id, device.id])));
    progress(`accepted statuses checked in the store: ${problems.checked}`);
    expect(problems.checked).toBeGreaterThan(100);
    expect(problems.missing).toEqual([]);
    expect(problems.duplicated).toEqual([]);
    expect(problems.failuresOutOfRange).toEqual([]);
    // And registry's record of each device names the build of its last accepted `confirmed`.
    expect(wrongBuilds(ledger, devices)).toEqual([]);
  });

  test('no raw token appears in any log of the run', async () => {
    const scan = findTokensInLogs(join(faults.logDir, '..', 'issued-tokens.txt'), faults.logDir);
    expect(scan.tokens).toBeGreaterThanOrEqual(2);
    expect(scan.sightings).toEqual([]);
  });

  test('every audit event of a subscribed kind reached the webhook, signed, once in effect, the one in flight when telemetry died too', async () => {
    const expected = new Set<string>();
    for (let before = ''; ; ) {
      const page = (await api('GET', `/api/v1/projects/${projectId}/audit/?limit=1000${before ? `&before=${before}` : ''}`, { token: ownerToken })).body as Array<{ id: string; action: string }>;
      for (const event of page) if (WEBHOOK_EVENTS.includes(event.action)) expected.add(event.id);
      if (page.length < 1000) break;
      before = page.at(-1)!.id;
    }
    const deliveredAuditIds = () => new Set(receiver.accepted().map((delivery) => JSON.parse(delivery.body).audit_event.id as string));
    const delivered = await eventually(async () => deliveredAuditIds(), (ids) => [...expected].every((id) => ids.has(id)), 60_000);
    progress(`webhook: ${expected.size} subscribed audit events, ${receiver.attempts.length} delivery attempts`);
    expect([...expected].filter((id) => !delivered.has(id))).toEqual([]);
    expect(expected.size).toBeGreaterThan(3);
    // One delivery per event: a retry (or a second attempt after the kill) reuses the delivery id.
    expect(receiver.accepted()).toHaveLength(delivered.size);
    expect(receiver.attempts.filter((attempt) => !WebhookReceiver.signatureIsValid(webhookSecret, attempt))).toEqual([]);
    const inFlight = receiver.attempts.filter((attempt) => attempt.id === heldDeliveryId);
    expect(inFlight[0]!.answered).toBe(0);
    expect(inFlight.at(-1)!.answered).toBe(200);
  });

  test('every acknowledged mutation has its audit event', async () => {
    const expected = new Set(ledger.mutations.map((mutation) => `${mutation.action} ${mutation.targetId}`));
    let missing: string[] = [];
    const giveUpAt = Date.now() + 60_000;
    do {
      const events: Array<{ id: string; action: string; target_id: string }> = [];
      for (let before = ''; ; ) {
        const page = (await api('GET', `/api/v1/projects/${projectId}/audit/?limit=1000${before ? `&before=${before}` : ''}`, { token: ownerToken })).body as typeof events;
        events.push(...page);
        if (page.length < 1000) break;
        before = page.at(-1)!.id;
      }
      const recorded = new Set(events.map((event) => `${event.action} ${event.target_id}`));
      missing = [...expected].filter((key) => !recorded.has(key));
      if (missing.length === 0) break;
      await sleep(1_000);
    } while (Date.now() < giveUpAt);
    progress(`acknowledged mutations checked against the audit trail: ${expected.size}`);
    expect(missing).toEqual([]);
  });
});

/**
 * A multipart upload whose binary is streamed at about `mibPerSecond`, so that a fault can hit it
 * in flight. Resolves the status, Retry-After and body; records the request in the ledger.
 */
async function slowUpload(gateway: number, mib: number, mibPerSecond: number): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const boundary = `fault-suite-${Date.now()}`;
  const manifest = JSON.stringify({ version_label: `s3-fault-${Date.now()}`, framework: 'esp_idf', chip_family: 'esp32' });
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="manifest"\r\n\r\n${manifest}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="binary"; filename="firmware.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(256 * 1024, 7);
  const chunks = mib * 4;
  const pause = 1_000 / (mibPerSecond * 4);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
    },
    async pull(controller) {
      if (sent === chunks) {
        controller.enqueue(tail);
        controller.close();
        return;
      }
      await sleep(pause);
      sent += 1;
      controller.enqueue(chunk);
    },
  });
  const at = Date.now();
  const url = `${faults.gatewayUrls[gateway]}/api/v1/projects/${projectId}/artifacts/`;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${ownerToken}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
      signal: AbortSignal.timeout(TRANSFER_DEADLINE_MS),
    } as RequestInit);
    const answer = (await response.json()) as any;
    const retryAfter = response.headers.get('retry-after');
    ledger.requests.push({ at, ms: Date.now() - at, gateway, method: 'POST', path: `/api/v1/projects/:id/artifacts/`, outcome: response.status, retryAfter, detail: answer.detail });
    return { status: response.status, retryAfter, body: answer };
  } catch (error) {
    ledger.requests.push({ at, ms: Date.now() - at, gateway, method: 'POST', path: `/api/v1/projects/:id/artifacts/`, outcome: 'hang', retryAfter: null, detail: (error as Error).message });
    throw error;
  }
}
