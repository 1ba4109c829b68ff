#!/usr/bin/env node
// `npm run monitoring:try`: the chart's alerts and dashboards against a real Prometheus that
// scrapes a local stack (docs/operations.md, "Monitoring"). It builds Prometheus from
// deploy/monitoring-tools (the release promtool comes from; about five minutes the first time),
// starts a throwaway stack and Prometheus with helm/ota/monitoring/alerts.yaml, runs a small
// workload (a rollout that a burst of signature_invalid failures pauses, a webhook whose receiver
// refuses each first attempt), then runs every dashboard panel's queries and lists the alerts.
// It prints one line per query with the series it returned, and exits 1 when one returned none.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const root = join(import.meta.dirname, '..');
const prometheusBin = join(root, '.tools', 'bin', 'prometheus');
const SCRAPE_SECONDS = 2;
// How long Prometheus scrapes after the workload: the `for` of the alerts that should fire is 0.
const SETTLE_SECONDS = 10;

const { freePort, startStack, throwawayStack } = await import(join(root, 'libs', 'devstack', 'dist', 'index.js'));
const { chartDashboards } = await import(join(root, 'libs', 'dashboards', 'dist', 'index.js'));

if (!existsSync(prometheusBin)) {
  process.stdout.write('building Prometheus from deploy/monitoring-tools; the first build takes about five minutes\n');
  const built = spawnSync('go', ['build', '-o', prometheusBin, 'github.com/prometheus/prometheus/cmd/prometheus'], { cwd: join(root, 'deploy', 'monitoring-tools'), stdio: 'inherit' });
  if (built.status !== 0) process.exit(1);
}

const { dataDir, logDir, options } = throwawayStack(root, 'monitoring', {
  SUPERVISE_INTERVAL_MS: '500',
  WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_RETRY_BASE_MS: '200',
  WEBHOOK_POLL_INTERVAL_MS: '100',
});
const stack = await startStack(options);
process.stdout.write(`stack up: gateway ${stack.gatewayUrl}, logs in ${logDir}\n`);
// The test kit's helpers (users, projects, the webhook receiver) read the stack from here.
process.env.OTA_TEST_STACK = JSON.stringify({ ...stack, logDir, issuedTokensFile: join(dataDir, 'issued-tokens.txt') });
const { api, checkBody, eventually, setupProject, uploadForm, MANIFEST, WebhookReceiver } = await import(join(root, 'libs', 'testkit', 'dist', 'index.js'));

const prometheusPort = await freePort();
const prometheusDir = join(dataDir, 'prometheus');
mkdirSync(prometheusDir, { recursive: true });
const scrapeConfigs = Object.entries(stack.metricsUrls).map(([component, url]) => {
  const { host } = new URL(url);
  return `  - job_name: ${component}\n    static_configs: [{ targets: ['${host}'] }]`;
});
writeFileSync(
  join(prometheusDir, 'prometheus.yml'),
  `global: { scrape_interval: ${SCRAPE_SECONDS}s, evaluation_interval: ${SCRAPE_SECONDS}s }\nrule_files: ['${join(root, 'helm', 'ota', 'monitoring', 'alerts.yaml')}']\nscrape_configs:\n${scrapeConfigs.join('\n')}\n`,
);
const prometheus = spawn(prometheusBin, [`--config.file=${join(prometheusDir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(prometheusDir, 'data')}`, `--web.listen-address=127.0.0.1:${prometheusPort}`], { stdio: ['ignore', 'ignore', 'ignore'] });
const prometheusUrl = `http://127.0.0.1:${prometheusPort}`;

let failed = false;
const receivers = [];
try {
  await eventually(() => fetch(`${prometheusUrl}/-/ready`).then((r) => r.status, () => 0), (status) => status === 200, 60_000);
  process.stdout.write(`prometheus up: ${prometheusUrl}\n`);
  await workload();
  process.stdout.write(`workload done; scraping for ${SETTLE_SECONDS} s\n`);
  await sleep(SETTLE_SECONDS * 1000);

  for (const board of chartDashboards()) {
    process.stdout.write(`\n${board.title} (${board.uid})\n`);
    for (const panel of board.panels ?? []) {
      for (const target of panel.targets ?? []) {
        // What Grafana would send: its variables and $__rate_interval filled in.
        const expr = String(target.expr).replaceAll('$__rate_interval', '1m').replaceAll('$namespace', '.*');
        const answer = await (await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`)).json();
        const series = answer.status === 'success' ? answer.data.result.length : -1;
        if (series <= 0) failed = true;
        const sample = series > 0 ? answer.data.result.slice(0, 2).map((r) => `${JSON.stringify(r.metric)}=${r.value[1]}`).join('; ') : answer.error ?? 'no data';
        process.stdout.write(`  ${series > 0 ? 'ok  ' : 'NONE'} ${panel.title} [${target.refId}]: ${series} series: ${sample}\n`);
      }
    }
  }
  const alerts = await (await fetch(`${prometheusUrl}/api/v1/alerts`)).json();
  process.stdout.write('\nalerts:\n');
  for (const alert of alerts.data.alerts) process.stdout.write(`  ${alert.state} ${alert.labels.alertname} ${JSON.stringify(alert.labels)}\n    ${alert.annotations.description}\n`);
} catch (error) {
  failed = true;
  process.stderr.write(`${error.stack ?? error}\n`);
} finally {
  prometheus.kill();
  for (const receiver of receivers) await receiver.close();
  await stack.stop();
}
process.exit(failed ? 1 : 0);

/** A rollout that signature_invalid failures pause, with a webhook that refuses each first attempt. */
async function workload() {
  const f = await setupProject();
  const receiver = await WebhookReceiver.start((_, attempt) => (attempt === 1 ? 503 : 204));
  receivers.push(receiver);
  await api('POST', `/api/v1/projects/${f.project.id}/webhooks/`, { token: f.user.token, json: { url: receiver.url, events: ['deployment.started', 'deployment.guardrail_tripped'] } });
  const fleet = Array.from({ length: 10 }, (_, i) => `try-${i + 1}`);
  const check = (deviceId) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });
  for (const deviceId of fleet) await check(deviceId);
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBytes(64)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, {
    token: f.user.token,
    json: { artifact_id: artifact.id, guardrails: { reason_limits: [{ reason: 'signature_invalid', count: 3, window_seconds: 600 }] } },
  });
  const path = `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/`;
  await api('POST', `${path}transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } });
  // Checks keep coming while Prometheus scrapes, so that rates have two samples.
  for (let round = 0; round < 5; round += 1) {
    for (const deviceId of fleet) await check(deviceId);
    await sleep(SCRAPE_SECONDS * 1000);
  }
  const report = (deviceId, event, reason) =>
    api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: created.body.id, event, ...(reason ? { reason } : {}), ...(event === 'confirmed' ? { build_number: artifact.build_number } : {}) } });
  await report(fleet[0], 'downloaded');
  await report(fleet[1], 'confirmed');
  for (const deviceId of fleet.slice(2, 5)) await report(deviceId, 'failed', 'signature_invalid');
  await report(fleet[5], 'rolled_back', 'boot_failed');
  await eventually(async () => (await api('GET', path, { token: f.user.token })).body.state, (state) => state === 'paused', 20_000);
  await eventually(async () => receiver.accepted().length, (accepted) => accepted >= 2, 30_000);
  // A 405, a 404 from a service: the error panels have something to show.
  await api('DELETE', '/api/v1/projects/', { token: f.user.token });
  await api('GET', `/api/v1/projects/${randomUUID()}/`, { token: f.user.token });
  for (let round = 0; round < 5; round += 1) {
    for (const deviceId of fleet) await check(deviceId);
    await sleep(SCRAPE_SECONDS * 1000);
  }
}
