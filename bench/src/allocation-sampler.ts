// Preloaded (node --require) into every service and into s0's and s17's servers by
// `npm run bench -- … --alloc-prof DIR`: samples what the process allocates from its start to its
// exit, the objects the collector has freed included (a request's garbage is most of what it
// allocates), and writes DIR/<process>-<pid>.heapprofile. `node bench/dist/allocation-shares.js
// DIR` reads them (docs/performance.md, "The device API's routes apart").
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/** The bytes between samples, on average: V8's default. */
const SAMPLING_INTERVAL_BYTES = 8192;

/** A name for the process from its script and arguments: `gateway`, `floor-server-front`. */
export function processNameOf(argv: readonly string[]): string {
  const [script = 'node', ...args] = argv;
  const service = /services\/([a-z]+)\/dist\/main\.js$/.exec(script);
  const name = service ? service[1]! : [script.replace(/^.*\//, '').replace(/\.js$/, ''), ...args].join('-');
  return name.replace(/[^\w.-]/g, '_');
}

function sampleUntilExit(dir: string): void {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', { samplingInterval: SAMPLING_INTERVAL_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  // A session in the process's own thread answers at once, so the profile is written before exit.
  process.once('exit', () =>
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (!error) writeFileSync(join(dir, `${processNameOf(process.argv.slice(1))}-${process.pid}.heapprofile`), JSON.stringify(result.profile));
    }),
  );
}

const dir = process.env.OTA_ALLOCATION_PROFILE_DIR;
if (dir) sampleUntilExit(dir);
