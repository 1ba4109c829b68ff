import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { chartDashboards, dashboardJson, metricNamesOf } from '@ota/dashboards';
import { parse, parseAllDocuments } from 'yaml';

// The chart's monitoring (docs/operations.md, "Monitoring"): the alerts pass promtool's check and
// their unit tests (deploy/test/monitoring/alerts.test.yaml), each has a runbook; the dashboards
// are the ones the code in libs/dashboards makes, laid out on Grafana's grid; and the chart renders
// both, accepted by the offline validator. That each metric they read is served is
// deploy/test/metrics.int.test.ts.

const root = join(__dirname, '..', '..');
const rulesFile = join(root, 'helm', 'ota', 'monitoring', 'alerts.yaml');
const dashboardsDir = join(root, 'helm', 'ota', 'monitoring', 'dashboards');
const DEFAULT_RUNBOOKS = 'https://github.com/ota-service/ota/blob/main/docs/operations.md';
const bin = (name: string) => {
  const path = join(root, '.tools', 'bin', name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run the tests with \`npm test\`, which builds it`);
  return path;
};

type Rule = { alert: string; expr: string; for?: string; labels: Record<string, string>; annotations: Record<string, string> };
const rules = (parse(readFileSync(rulesFile, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }).groups.flatMap((group) => group.rules);

describe('the alerts', () => {
  it('pass promtool check rules', () => {
    const result = spawnSync(bin('promtool'), ['check', 'rules', rulesFile], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(result.status).toBe(0);
  });

  it('pass their unit tests (promtool test rules)', () => {
    const result = spawnSync(bin('promtool'), ['test', 'rules', join(__dirname, 'monitoring', 'alerts.test.yaml')], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('each have a test that fires them and one that finds them silent', () => {
    const tests = (parse(readFileSync(join(__dirname, 'monitoring', 'alerts.test.yaml'), 'utf8')) as { tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }> }).tests.flatMap((test) => test.alert_rule_test);
    for (const { alert } of rules) {
      expect([alert, tests.some((test) => test.alertname === alert && test.exp_alerts.length > 0)]).toEqual([alert, true]);
      expect([alert, tests.some((test) => test.alertname === alert && test.exp_alerts.length === 0)]).toEqual([alert, true]);
    }
  });

  it('each carry a severity, a summary, a description and a runbook in docs/operations.md', () => {
    const operations = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
    expect(rules.length).toBeGreaterThanOrEqual(9);
    for (const rule of rules) {
      expect([rule.alert, rule.labels.severity]).toEqual([rule.alert, expect.stringMatching(/^(critical|warning)$/)]);
      expect(rule.annotations.summary).toMatch(/\S/);
      expect(rule.annotations.description).toMatch(/\S/);
      expect(rule.annotations.runbook_url).toBe(`${DEFAULT_RUNBOOKS}#${rule.alert.toLowerCase()}`);
      expect([rule.alert, operations.includes(`\n#### ${rule.alert}\n`)]).toEqual([rule.alert, true]);
    }
  });
});

describe('the dashboards', () => {
  const boards = chartDashboards();

  it('are the files the chart carries (after a change: npm run dashboards)', () => {
    expect(readdirSync(dashboardsDir).sort()).toEqual(boards.map((board) => `${board.uid}.json`).sort());
    for (const board of boards) expect(readFileSync(join(dashboardsDir, `${board.uid}.json`), 'utf8')).toBe(dashboardJson(board));
  });

  it('lay their panels on the 24-column grid without overlap, each with a query of our metrics', () => {
    for (const board of boards) {
      const cells = new Set<string>();
      const ids = new Set<number>();
      for (const panel of board.panels ?? []) {
        expect(ids.has(panel.id!)).toBe(false);
        ids.add(panel.id!);
        const { x, y, w, h } = panel.gridPos!;
        expect(x + w).toBeLessThanOrEqual(24);
        for (let column = x; column < x + w; column += 1) {
          for (let row = y; row < y + h; row += 1) {
            expect([panel.title, cells.has(`${column},${row}`)]).toEqual([panel.title, false]);
            cells.add(`${column},${row}`);
          }
        }
        if (panel.type === 'row') continue;
        const targets = 'targets' in panel ? (panel.targets ?? []) : [];
        expect([panel.title, targets.length > 0]).toEqual([panel.title, true]);
        for (const target of targets) {
          expect(target.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
          expect([panel.title, metricNamesOf(String(target.expr)).length > 0]).toEqual([panel.title, true]);
          expect(String(target.expr)).toContain('namespace=~"$namespace"');
        }
      }
    }
  });
});

describe('the chart with monitoring on', () => {
  const values = join(__dirname, 'monitoring', 'monitoring-values.yaml');
  const rendered = spawnSync(bin('helm'), ['template', 'ota', join(root, 'helm', 'ota'), '--namespace', 'fleet', '-f', values], { encoding: 'utf8' });
  const objects = parseAllDocuments(rendered.stdout).map((document) => document.toJS() as { kind: string; metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string> } | null).filter((object) => object !== null);

  it('renders the rule and the dashboards, and the offline validator accepts them', () => {
    expect(rendered.stderr).toBe('');
    expect(rendered.status).toBe(0);
    const validated = spawnSync(bin('k8s-validate'), [], { input: rendered.stdout, encoding: 'utf8' });
    expect(validated.stderr).toBe('');
    expect(validated.status).toBe(0);
    expect(objects.filter((object) => object.kind === 'PrometheusRule').map((object) => object.metadata.name)).toEqual(['ota-ota']);
    expect(objects.filter((object) => object.metadata.labels?.grafana_dashboard === '1').map((object) => object.metadata.name).sort()).toEqual(['ota-ota-dashboard-fleet', 'ota-ota-dashboard-services']);
  });

  it('holds every alert as written, its runbook link moved to runbookBaseUrl', () => {
    const rule = objects.find((object) => object.kind === 'PrometheusRule')!;
    expect(rule.metadata.labels.release).toBe('kube-prometheus-stack');
    const renderedRules = (rule.spec.groups as Array<{ rules: Rule[] }>).flatMap((group) => group.rules);
    expect(renderedRules).toEqual(
      rules.map((written) => ({ ...written, annotations: { ...written.annotations, runbook_url: written.annotations.runbook_url!.replace(DEFAULT_RUNBOOKS, 'https://wiki.example.com/ota/operations') } })),
    );
  });

  it('holds each dashboard as the chart carries it, for the Grafana sidecar', () => {
    for (const board of chartDashboards()) {
      const configMap = objects.find((object) => object.data?.[`${board.uid}.json`] !== undefined)!;
      expect(configMap.metadata.annotations).toEqual({ grafana_folder: 'OTA' });
      expect(JSON.parse(configMap.data![`${board.uid}.json`]!)).toEqual(JSON.parse(dashboardJson(board)));
    }
  });

  it('renders neither by default', () => {
    const defaults = spawnSync(bin('helm'), ['template', 'ota', join(root, 'helm', 'ota'), '--set', 'gateway.publicBaseUrl=https://ota.example.com'], { encoding: 'utf8' });
    expect(defaults.status).toBe(0);
    expect(defaults.stdout).not.toContain('kind: PrometheusRule');
    expect(defaults.stdout).not.toContain('grafana_dashboard');
  });
});
