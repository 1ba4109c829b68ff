import { execSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

export function machine() {
  const commit = (command: string) => {
    try {
      return execSync(command, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    commit: commit('git rev-parse --short HEAD') + (commit('git status --porcelain') ? '+changes' : ''),
  };
}

export function writeResult(dir: string, scenario: string, result: unknown): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${scenario}.json`);
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

const BEGIN = '<!-- bench:results:begin -->';
const END = '<!-- bench:results:end -->';

const ms = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? `${Number(value.toFixed(4))}` : '–');

/** Rewrites the generated table of docs/performance.md from every result in `dir`. */
export function updatePerformanceDoc(docPath: string, dir: string): void {
  const rows: string[] = [];
  const scenarioFiles = readdirSync(dir)
    .filter((name) => /^s\d+\.json$/.test(name))
    .sort((a, b) => Number(a.slice(1, -5)) - Number(b.slice(1, -5)));
  for (const file of scenarioFiles) {
    const result = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, any>;
    const at = result.atMax ?? result;
    const latency = at.latency ?? result.storm ?? {};
    const usage = (at.usage ?? result.usage ?? {}) as Record<string, { cpuMsPerRequest: number; rssMiB: number }>;
    const cpu = Object.entries(usage)
      .map(([name, value]) => `${name} ${value.cpuMsPerRequest}`)
      .join(', ');
    const rss = Object.entries(usage)
      .map(([name, value]) => `${name} ${value.rssMiB}`)
      .join(', ');
    // Scenarios that search no rate (a preview, a summary, single store operations) have none to show.
    const held = result.maxRate !== undefined ? `${result.maxRate}/s` : result.stormRate ? `storm ${result.stormRate}/s` : result.rate !== undefined ? `${result.rate}/s` : '—';
    const notes = [
      result.ratioToS0 !== undefined ? `${result.ratioToS0}× s0` : '',
      result.rounds !== undefined
        ? `our services used ${result.servicesToFloor}× the floor's CPU per check at ${result.rate}/s, the median of ${result.rounds.length} rounds ${result.scenario === 's22' ? 'with both served at once, each at that rate' : 'in turns'} (${result.servicesToFloorRange?.join(' to ')})`
        : '',
      result.atSameRates !== undefined
        ? result.servicesToFloor
          ? `s1's services used ${result.servicesToFloor}× the floor's CPU per check at ${result.servicesToFloorRate}/s`
          : 's1 not measured in this run'
        : '',
      result.acceptedButNotStored !== undefined ? `${result.acceptedButNotStored} accepted events not stored` : '',
      result.recoverySeconds !== undefined ? `recovered in ${result.recoverySeconds} s, ${result.unexpectedErrors} errors other than 429/503 with Retry-After` : '',
      result.propagationMs !== undefined ? `pause honoured within ${result.propagationMs} ms` : '',
      result.previewMs !== undefined ? `preview of ${result.devices} devices in ${result.previewMs} ms (${result.shareOfPreviewDeadline} of PREVIEW_TIMEOUT_MS); CPU is per preview` : '',
      result.operations !== undefined && result.seedingSeconds === undefined
        ? `driver CPU per store operation, one at a time: ${Object.entries(result.operations as Record<string, { oneAtATime: { cpuMsPerOperation: number } }>)
            .map(([name, cost]) => `${name} ${cost.oneAtATime.cpuMsPerOperation} ms`)
            .join(', ')}`
        : '',
      result.sizes !== undefined
        ? Object.entries(result.sizes as Record<string, { alone: { medianMs?: number }; underLoad: { medianMs?: number; checkRate: number } }>)
            .map(([devices, size]) => `summary of ${devices} devices: median ${size.alone.medianMs} ms alone, ${size.underLoad.medianMs} ms under ${size.underLoad.checkRate} checks/s`)
            .join('; ')
        : '',
      result.patchBytes !== undefined
        ? `a patch of ${result.patchBytes} B for a ${result.imageBytes} B image (${result.ofImage} of it) ready in ${result.seconds} s: the artifacts service with detools under it took ${result.artifactsCpuSeconds} CPU s and ${result.artifactsPeakMiB} MiB at the peak (${result.artifactsIdleMiB} MiB before)`
        : '',
      result.operations !== undefined && result.seedingSeconds !== undefined
        ? `${result.devices} devices seeded in ${result.seedingSeconds} s (store ${result.storeMiBBefore} → ${result.storeMiBAfter} MiB); p95 ms: ${Object.entries(result.operations as Record<string, { p95Ms?: number; errors?: string[] }>)
            .map(([name, cost]) => `${name} ${cost.p95Ms ?? 'not measured'}${cost.errors?.length ? ' (errors)' : ''}`)
            .join(', ')}; create ${result.createDeployment.ms} ms, start ${result.startDeployment.ms} ms`
        : '',
      result.shapes !== undefined
        ? `the store's CPU per check's device and record writes: ${Object.entries(result.shapes as Record<string, { storeCpuMsPerCheck: number }>)
            .map(([shape, cost]) => `${shape} ${cost.storeCpuMsPerCheck} ms`)
            .join(', ')}`
        : '',
    ]
      .filter(Boolean)
      .join('; ');
    rows.push(
      `| ${result.scenario} | ${held} | ${ms(latency.p50)} | ${ms(latency.p99)} | ${ms(latency.p999)} | ${ms(latency.errorRate)} | ${cpu} | ${rss} | ${notes} |`,
    );
  }
  if (scenarioFiles.length === 0) throw new Error(`no scenario results in ${dir}`);
  const first = JSON.parse(readFileSync(join(dir, scenarioFiles[0]!), 'utf8'));
  const table = [
    BEGIN,
    `Measured on ${first.machine.cores} cores (${first.machine.cpu}), ${first.machine.memoryGiB} GiB, Node.js ${first.machine.node}, commit ${first.machine.commit}, ${first.date}.`,
    '',
    '| Scenario | Highest rate with p99 ≤ 50 ms | p50 ms | p99 ms | p99.9 ms | Error rate | CPU ms per request | Memory (PSS) MiB | Notes |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    END,
  ].join('\n');
  const doc = readFileSync(docPath, 'utf8');
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < 0) throw new Error(`${docPath} has no ${BEGIN} … ${END} section`);
  writeFileSync(docPath, doc.slice(0, begin) + table + doc.slice(end + END.length));
}
