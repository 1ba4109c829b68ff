// `node bench/dist/profile-shares.js DIR`: where each service's CPU went in the `.cpuprofile`
// files a `npm run bench -- … --cpu-prof DIR` run wrote (docs/performance.md, "Where a check's time goes").
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of a V8 CPU profile this reads (what `node --cpu-prof` writes). */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/**
 * What a sample's time is charged to: the first frame from the leaf up whose script belongs to one
 * of these, so that Node's own stream, socket and promise code is charged to the library that
 * called it (a socket write of the driver is the driver's).
 */
const CATEGORIES: ReadonlyArray<[RegExp, string]> = [
  [/node_modules\/\.pnpm\/(mongodb|bson|mongoose|mquery)@|libs\/mongo\/dist/, 'store driver (mongodb, bson, mongoose)'],
  [/node_modules\/\.pnpm\/(@grpc|@bufbuild)\+|libs\/(grpc|proto)\/dist|node:internal\/http2/, 'gRPC (grpc-js, protobuf, HTTP/2)'],
  [/node_modules\/\.pnpm\/(koa|@koa|co-body|raw-body|type-is|delegates|@hapi|content-type|statuses|on-finished|accepts|negotiator|mime|cookies|http-errors|fresh|vary)[@+-]|node:_http|node:http/, 'HTTP and Koa'],
  [/node_modules\/\.pnpm\/(prom-client|tdigest|bintrees|pino|@pinojs|sonic-boom|thread-stream)[@+]|libs\/(metrics|logging)\/dist/, 'metrics and logs'],
  [/node_modules\/\.pnpm\/@nats-io\+/, 'NATS'],
  [/services\/[a-z]+\/dist|libs\/[a-z-]+\/dist|node_modules\/\.pnpm\/ajv@/, 'our code'],
];
const GARBAGE_COLLECTOR = 'garbage collection';
const PROGRAM = 'V8 and libuv outside JavaScript';
const OTHER = "Node's own code called from no library above";

/** Busy time (idle left out) by category, in milliseconds. */
export function sharesOf(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const categoryOf = new Map<number, string>();
  const categorise = (id: number): string => {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(garbage collector)') return GARBAGE_COLLECTOR;
    if (node.callFrame.functionName === '(program)') return PROGRAM;
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const known = categoryOf.get(at);
      if (known) return known;
      const url = byId.get(at)!.callFrame.url;
      const match = CATEGORIES.find(([pattern]) => pattern.test(url));
      if (match) {
        categoryOf.set(at, match[1]);
        return match[1];
      }
    }
    return OTHER;
  };
  const shares = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    if (byId.get(id)!.callFrame.functionName === '(idle)') return;
    const category = categorise(id);
    shares.set(category, (shares.get(category) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
  });
  return shares;
}

/** The service a profile is of: the one whose `dist/main.js` it ran. */
export function serviceOf(profile: CpuProfile): string {
  for (const node of profile.nodes) {
    const match = /services\/([a-z]+)\/dist\/main\.js$/.exec(node.callFrame.url);
    if (match) return match[1]!;
  }
  return 'unknown';
}

function main(dir: string): void {
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cpuprofile')).sort()) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const shares = [...sharesOf(profile)].sort((a, b) => b[1] - a[1]);
    const busy = shares.reduce((sum, [, ms]) => sum + ms, 0);
    console.log(`${serviceOf(profile)} (${file}): ${(busy / 1000).toFixed(1)} s busy`);
    for (const [category, ms] of shares) console.log(`  ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${category}`);
  }
}

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node bench/dist/profile-shares.js DIR (the --cpu-prof DIR of a bench run)');
    process.exit(2);
  }
  main(dir);
}
