import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFEST, api, checkBody, eventually, randomBinary, setupProject, testStack, uploadForm, WebhookReceiver } from '@ota/testkit';
import { chartDashboards, familyOf, metricNamesOf } from '@ota/dashboards';
import { parse } from 'yaml';

// What a platform team's Prometheus sees (docs/operations.md, "Metrics"): after a small workload
// (a rollout that a burst of signature_invalid failures pauses, with a webhook whose receiver
// refuses each delivery's first attempt), every process's /metrics passes promtool's lint, and
// every metric an alert or a dashboard panel reads is served.

const root = join(__dirname, '..', '..');
const COMPONENTS = ['gateway', 'registry', 'artifacts', 'rollout', 'telemetry'] as const;
const promtool = join(root, '.tools', 'bin', 'promtool');

type Exposition = { body: string; families: Map<string, string>; samples: string[] };

async function scrape(component: string): Promise<Exposition> {
  const response = await fetch(testStack().metricsUrls[component]!);
  expect(response.status).toBe(200);
  const body = await response.text();
  const families = new Map<string, string>();
  for (const [, name, type] of body.matchAll(/^# TYPE (\S+) (\S+)$/gm)) families.set(name!, type!);
  return { body, families, samples: body.split('\n').filter((line) => line && !line.startsWith('#')) };
}

/** The value of the first sample whose line starts with the series name and holds every matcher. */
function valueOf(exposition: Exposition, name: string, matchers: Record<string, string> = {}): number | undefined {
  const line = exposition.samples.find((sample) => sample.startsWith(`${name}{`) || sample.startsWith(`${name} `) ? Object.entries(matchers).every(([label, value]) => sample.includes(`${label}="${value}"`)) : false);
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Every expression the alerts and dashboards evaluate, with where it comes from. */
function monitoringQueries(): Array<{ where: string; expr: string }> {
  const rules = parse(readFileSync(join(root, 'helm', 'ota', 'monitoring', 'alerts.yaml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string; annotations: Record<string, string> }> }> };
  const queries = rules.groups.flatMap((group) => group.rules.flatMap((rule) => [rule.expr, ...Object.values(rule.annotations)].map((expr) => ({ where: `alert ${rule.alert}`, expr }))));
  for (const board of chartDashboards()) {
    for (const panel of board.panels ?? []) {
      for (const target of ('targets' in panel ? panel.targets : undefined) ?? []) queries.push({ where: `dashboard ${board.uid}, panel "${panel.title}"`, expr: String(target.expr) });
    }
  }
  return queries;
}

let scraped: Record<(typeof COMPONENTS)[number], Exposition>;
let deploymentId: string;
const traceId = randomBytes(16).toString('hex');
const requestId = `metrics-${randomUUID()}`;
const receivers: WebhookReceiver[] = [];
afterAll(() => Promise.all(receivers.map((receiver) => receiver.close())));

beforeAll(async () => {
  if (!existsSync(promtool)) throw new Error(`${promtool} is missing: run the tests with \`npm test\`, which builds promtool`);
  const f = await setupProject();
  const receiver = await WebhookReceiver.start((_, attempt) => (attempt === 1 ? 503 : 204));
  receivers.push(receiver);
  const webhook = await api('POST', `/api/v1/projects/${f.project.id}/webhooks/`, { token: f.user.token, json: { url: receiver.url, events: ['deployment.started', 'deployment.guardrail_tripped'] } });
  expect(webhook.status).toBe(201);

  const fleet = Array.from({ length: 6 }, (_, i) => `metrics-${i + 1}`);
  const check = (deviceId: string) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });
  for (const deviceId of fleet) expect((await check(deviceId)).status).toBe(200);
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(64)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, {
    token: f.user.token,
    json: { artifact_id: artifact.id, guardrails: { reason_limits: [{ reason: 'signature_invalid', count: 2, window_seconds: 600 }] } },
  });
  expect(created.status).toBe(201);
  deploymentId = created.body.id;
  const path = `/api/v1/projects/${f.project.id}/deployments/${deploymentId}/`;
  expect((await api('POST', `${path}transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } })).status).toBe(200);

  for (const deviceId of fleet) expect((await check(deviceId)).body.update_available).toBe(true);
  const report = (deviceId: string, event: string, reason?: string) =>
    api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: deploymentId, event, ...(reason ? { reason } : {}) } });
  expect((await report(fleet[0]!, 'downloaded')).status).toBe(200);
  expect((await report(fleet[1]!, 'failed', 'signature_invalid')).status).toBe(200);
  expect((await report(fleet[2]!, 'failed', 'signature_invalid')).status).toBe(200);
  expect((await report(fleet[3]!, 'failed', 'a reason no list knows')).status).toBe(200);
  await eventually(async () => (await api('GET', path, { token: f.user.token })).body.state as string, (state) => state === 'paused', 20_000);
  await eventually(async () => receiver.accepted().length, (accepted) => accepted >= 2, 30_000);

  // Refused before routing or by method: each still counts under its route's pattern.
  expect((await api('DELETE', '/api/v1/projects/', { token: f.user.token })).status).toBe(405);
  // A traced request that registry refuses, so that registry writes a line for it.
  const traced = await api('GET', `/api/v1/projects/${randomUUID()}/`, {
    token: f.user.token,
    headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': requestId },
  });
  expect(traced.status).toBe(404);

  scraped = Object.fromEntries(await Promise.all(COMPONENTS.map(async (component) => [component, await scrape(component)]))) as typeof scraped;
}, 120_000);

it.each(COMPONENTS)('%s serves metrics that pass promtool check metrics', (component) => {
  const lint = spawnSync(promtool, ['check', 'metrics'], { input: scraped[component].body, encoding: 'utf8' });
  expect(lint.stdout + lint.stderr).toBe('');
  expect(lint.status).toBe(0);
});

it('serves every metric an alert or a dashboard panel reads', () => {
  const served = new Set(COMPONENTS.flatMap((component) => [...scraped[component].families.keys()]));
  const missing = monitoringQueries().flatMap(({ where, expr }) => metricNamesOf(expr).filter((name) => !served.has(familyOf(name, served))).map((name) => `${where}: ${name}`));
  expect(missing).toEqual([]);
  // The extraction itself finds names: an empty list above would prove nothing otherwise.
  expect(new Set(monitoringQueries().flatMap(({ expr }) => metricNamesOf(expr))).size).toBeGreaterThan(30);
});

it('labels every series with its component, never with a label Kubernetes discovery adds', () => {
  for (const component of COMPONENTS) {
    const { samples } = scraped[component];
    expect(samples.filter((sample) => !sample.includes(`ota_component="${component}"`))).toEqual([]);
    expect(samples.filter((sample) => /[{,](service|job|instance|namespace|pod)="/.test(sample))).toEqual([]);
    expect(valueOf(scraped[component], 'ota_ready')).toBe(1);
    expect(valueOf(scraped[component], 'ota_mongodb_reachable')).toBe(1);
  }
  for (const component of ['gateway', 'artifacts', 'rollout', 'telemetry'] as const) expect(valueOf(scraped[component], 'ota_nats_connected')).toBe(1);
});

it('counts what the fleet did: check outcomes, reports by reason, the guardrail and the deployment it paused', () => {
  expect(valueOf(scraped.gateway, 'ota_device_checks_total', { status: 'offered' })).toBeGreaterThanOrEqual(6);
  expect(valueOf(scraped.gateway, 'ota_device_checks_total', { status: 'no_active_deployment' })).toBeGreaterThanOrEqual(6);
  expect(valueOf(scraped.rollout, 'ota_device_status_reports_total', { event: 'failed', reason: 'signature_invalid' })).toBeGreaterThanOrEqual(2);
  // A reason outside the documented list is counted, under `other`: labels do not grow with the fleet.
  expect(valueOf(scraped.rollout, 'ota_device_status_reports_total', { event: 'failed', reason: 'other' })).toBeGreaterThanOrEqual(1);
  expect(scraped.rollout.body).not.toContain('a reason no list knows');
  expect(valueOf(scraped.rollout, 'ota_guardrail_trips_total', { guardrail: 'reason_limit' })).toBeGreaterThanOrEqual(1);
  expect(valueOf(scraped.rollout, 'ota_deployment_state', { deployment_id: deploymentId, state: 'paused', paused_by: 'reason_limit' })).toBe(1);
  expect(valueOf(scraped.rollout, 'ota_deployment_devices', { deployment_id: deploymentId, status: 'failed' })).toBe(3);
  expect(valueOf(scraped.rollout, 'ota_deployment_failures', { deployment_id: deploymentId, reason: 'signature_invalid' })).toBe(2);
});

it('counts the services around the requests: gRPC codes as Go names them, the store, the bus, webhooks', () => {
  expect(valueOf(scraped.registry, 'grpc_server_handled_total', { grpc_method: 'getProject', grpc_code: 'NotFound' })).toBeGreaterThanOrEqual(1);
  expect(scraped.gateway.body).not.toMatch(/grpc_code="(?!OK")[A-Z_]+"/);
  expect(valueOf(scraped.gateway, 'http_requests_total', { method: 'DELETE', route: '/api/v1/projects/', status: '405' })).toBeGreaterThanOrEqual(1);
  expect(valueOf(scraped.rollout, 'ota_mongodb_operation_duration_seconds_count')).toBeGreaterThan(0);
  // The per-command events are opt-in (MONGODB_COMMAND_METRICS): the default stack serves none.
  expect(scraped.rollout.families.has('ota_mongodb_command_duration_seconds')).toBe(false);
  expect(valueOf(scraped.artifacts, 'ota_s3_request_duration_seconds_count', { operation: 'PutObject' })).toBeGreaterThan(0);
  expect(valueOf(scraped.telemetry, 'ota_jetstream_consumer_pending_messages', { consumer: 'telemetry-audit' })).toBeGreaterThanOrEqual(0);
  expect(valueOf(scraped.telemetry, 'ota_webhook_delivery_attempts_total', { result: 'retrying' })).toBeGreaterThanOrEqual(2);
  expect(valueOf(scraped.telemetry, 'ota_webhook_delivery_attempts_total', { result: 'delivered' })).toBeGreaterThanOrEqual(2);
  expect(valueOf(scraped.telemetry, 'ota_webhook_oldest_pending_delivery_age_seconds')).toBeGreaterThanOrEqual(0);
});

it('passes a caller’s traceparent through gRPC: the service’s log line carries its trace id and the request id', async () => {
  const line = await eventually(
    async () => readFileSync(join(testStack().logDir, 'registry.log'), 'utf8').split('\n').find((entry) => entry.includes(requestId)),
    (found) => found !== undefined,
  );
  expect(JSON.parse(line!)).toMatchObject({ requestId, traceId, rpc: 'ota.registry.v1.RegistryService/getProject' });
});
