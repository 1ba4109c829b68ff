// `npm run simulate -- --token <device-scope token> [options]`: a fleet of virtual devices.
import { parseArgs } from 'node:util';
import { FleetHealth } from './health';
import { simulate, simulateHours, type SimulationSummary } from './simulator';

const USAGE = `usage: npm run simulate -- --token TOKEN [options]

  --token TOKEN            a project token of device scope (required)
  --url URL                the gateway (default http://127.0.0.1:8080)
  --devices N              how many virtual devices (default 100)
  --prefix TEXT            device ids are <prefix><index> (default sim-)
  --concurrency N          requests in flight at once (default 50)
  --fail SHARE             share of devices that report failed, 0..1 (default 0)
  --roll-back SHARE        share of devices that report rolled_back (default 0)
  --signature-invalid SHARE  share that report failed with signature_invalid (default 0)
  --silent SHARE           share that install, report up to reboot and then never confirm
                           (default 0): what confirm_timeout_seconds counts as no_confirmation
  --burst                  the failing devices run first, so their failures arrive together
                           (what failure_threshold and reason_limits react to)
  --seed TEXT              which devices get which behaviour (default ota)
  --framework NAME         arduino or esp_idf (default esp_idf)
  --chip-family NAME       (default esp32)
  --chip-revisions LIST    chip revisions the devices report, major*100+minor, in equal shares
                           (e.g. 3,101; default: none reported)
  --secure-version N       the eFuse anti-rollback version every device reports (default: none)
  --hours N                run N simulated hours (default 0: one check per device, no health):
                           each hour every device checks once with its health (docs/api.md,
                           "Device health") and installs what it is offered, then runs the hour
  --abnormal-per-hour RATE with --hours, abnormal resets per device-hour of a healthy build
                           (default 0.01)
  --crash-loop BUILD:HOURS with --hours, devices on build BUILD panic once every HOURS hours
                           after they confirm it (may be repeated)

Progress goes to stderr every second; the summary is one JSON line on stdout.`;

function share(value: string | undefined, name: string): number {
  const number = Number(value ?? '0');
  if (!Number.isFinite(number) || number < 0 || number > 1) throw new Error(`--${name} takes a share from 0 to 1`);
  return number;
}

function whole(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`--${name} takes a whole number above 0`);
  return Number(value);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      token: { type: 'string' },
      url: { type: 'string', default: 'http://127.0.0.1:8080' },
      devices: { type: 'string' },
      prefix: { type: 'string', default: 'sim-' },
      concurrency: { type: 'string' },
      fail: { type: 'string' },
      'roll-back': { type: 'string' },
      'signature-invalid': { type: 'string' },
      silent: { type: 'string' },
      burst: { type: 'boolean', default: false },
      seed: { type: 'string', default: 'ota' },
      framework: { type: 'string', default: 'esp_idf' },
      'chip-family': { type: 'string', default: 'esp32' },
      'chip-revisions': { type: 'string' },
      'secure-version': { type: 'string' },
      hours: { type: 'string' },
      'abnormal-per-hour': { type: 'string' },
      'crash-loop': { type: 'string', multiple: true },
      help: { type: 'boolean' },
    },
  });
  if (values.help || !values.token) throw new Error(USAGE);
  const options = {
    url: values.url!.replace(/\/$/, ''),
    token: values.token,
    devices: whole(values.devices, 'devices', 100),
    prefix: values.prefix!,
    concurrency: whole(values.concurrency, 'concurrency', 50),
    shares: { fail: share(values.fail, 'fail'), rollBack: share(values['roll-back'], 'roll-back'), signatureInvalid: share(values['signature-invalid'], 'signature-invalid'), silent: share(values.silent, 'silent') },
    burst: values.burst,
    seed: values.seed!,
    framework: values.framework!,
    chipFamily: values['chip-family']!,
    chipRevisions: values['chip-revisions'] === undefined ? undefined : values['chip-revisions'].split(',').map((part) => bounded(part.trim(), 'chip-revisions', 65_535)),
    secureVersion: values['secure-version'] === undefined ? undefined : bounded(values['secure-version'], 'secure-version', 4_294_967_295),
  };
  const progress = (done: number, running: SimulationSummary) =>
    process.stderr.write(
      `[simulate] ${done}/${running.devices} devices  offered ${running.offered}  confirmed ${running.confirmed}  ` +
        `failed ${running.failedReports}  rolled back ${running.rolledBack}  silent ${running.silent}  stopped ${running.stopped}  errors ${running.errors}\n`,
    );
  if (values.hours === undefined) {
    const { builds: _builds, behaviours: _behaviours, ...totals } = await simulate(options, progress);
    process.stdout.write(`${JSON.stringify(totals)}\n`);
    return;
  }
  const health = new FleetHealth({ seed: values.seed!, abnormalPerHour: rate(values['abnormal-per-hour']), crashLoops: crashLoopsOf(values['crash-loop'] ?? []) });
  await simulateHours({ ...options, health }, whole(values.hours, 'hours', 1), (hour, summary) => {
    const { builds: _builds, behaviours: _behaviours, ...totals } = summary;
    process.stdout.write(`${JSON.stringify({ hour, ...totals })}\n`);
  });
}

function rate(value: string | undefined): number {
  const number = Number(value ?? '0.01');
  if (!Number.isFinite(number) || number < 0) throw new Error('--abnormal-per-hour takes a rate of at least 0');
  return number;
}

/** `BUILD:HOURS` pairs. */
function crashLoopsOf(values: readonly string[]): Map<number, number> {
  const loops = new Map<number, number>();
  for (const value of values) {
    const match = /^(\d+):(\d+(?:\.\d+)?)$/.exec(value);
    if (!match || Number(match[2]) <= 0) throw new Error('--crash-loop takes BUILD:HOURS, e.g. 42:2');
    loops.set(Number(match[1]), Number(match[2]));
  }
  return loops;
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});

function bounded(value: string, name: string, most: number): number {
  if (!/^\d+$/.test(value) || Number(value) > most) throw new Error(`--${name} takes whole numbers from 0 to ${most}`);
  return Number(value);
}
