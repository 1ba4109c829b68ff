// `node bench/dist/perf-shares.js OURS.txt FLOOR.txt CHECKS [FREQUENCY]`: where two processes'
// CPU went, side by side, from Linux perf's samples of each (docs/performance.md, "Where the
// floor's difference went, read with perf"). Each file is `perf script -F ip,sym` of a
// `perf record -g -F FREQUENCY -p PID` taken while the process ran with `--perf-basic-prof`, so
// that perf names the compiled JavaScript (`JS:*name file:line:column`).
import { readFileSync } from 'node:fs';

/**
 * Where a sample's time is charged: the nearest JavaScript frame from the leaf up, so that V8's
 * builtins and runtime count for the code that called them, and grouped by where that code lives.
 * Our packages are named one by one; a library by its package; Node's own modules by group.
 */
const PLACES: ReadonlyArray<[RegExp, (match: RegExpExecArray) => string]> = [
  [/\/services\/[a-z]+\/dist\//, () => 'our code: services'],
  [/\/libs\/([a-z-]+)\/dist\//, (match) => `our code: libs/${match[1]}`],
  [/\/bench\/dist\//, () => 'the bench (the floor\'s own code)'],
  [/node_modules\/\.pnpm\/(@[^+/]+)\+([^@/]+)@/, (match) => `${match[1]}/${match[2]}`],
  [/node_modules\/\.pnpm\/([^@/]+)@/, (match) => match[1]!],
  [/node:internal\/(http2|streams|crypto|process)\//, (match) => `node: ${match[1]}`],
  [/node:(net|events)\b/, (match) => `node: ${match[1]}`],
  [/node:/, () => 'node: other'],
];
const GARBAGE_COLLECTOR = 'the garbage collector';
const NATIVE = 'the kernel and native code, under no JavaScript';
// V8's collector, on the main thread or its helpers: what a sample with no JavaScript frame shows at its leaf.
const COLLECTOR_FUNCTIONS = /Scaveng|Marking|MarkCompact|Sweep|Evacuat|RememberedSet|v8::internal::Heap|GCTracer/;

/** The samples of one `perf script -F ip,sym` text, by place. */
export function sharesOf(script: string): { total: number; samples: Map<string, number> } {
  const samples = new Map<string, number>();
  let total = 0;
  let frames: string[] = [];
  const charge = () => {
    if (frames.length === 0) return;
    total += 1;
    const place = placeOf(frames);
    samples.set(place, (samples.get(place) ?? 0) + 1);
    frames = [];
  };
  for (const line of script.split('\n')) {
    if (line.trim() === '') charge();
    // A frame: its address, then its symbol and, in parentheses, its object file.
    else if (/^\s/.test(line)) frames.push(line.trim().replace(/^[0-9a-f]+\s+/, '').replace(/\s+\([^()]*\)$/, ''));
  }
  charge();
  return { total, samples };
}

function placeOf(frames: readonly string[]): string {
  const script = frames.find((frame) => frame.startsWith('JS:'));
  if (script === undefined) return COLLECTOR_FUNCTIONS.test(frames[0]!) ? GARBAGE_COLLECTOR : NATIVE;
  for (const [pattern, name] of PLACES) {
    const match = pattern.exec(script);
    if (match) return name(match);
  }
  return 'other JavaScript';
}

/** Microseconds a check by place, for the first process, the second, and the first less the second. */
export function comparedShares(ours: string, floor: string, checks: number, frequency: number) {
  const [a, b] = [sharesOf(ours), sharesOf(floor)];
  const perCheck = (count: number) => Math.round((count / frequency / checks) * 1e7) / 10;
  const places = [...new Set([...a.samples.keys(), ...b.samples.keys()])];
  const rows = places.map((place) => {
    const [first, second] = [a.samples.get(place) ?? 0, b.samples.get(place) ?? 0];
    return { place, ours: perCheck(first), floor: perCheck(second), difference: perCheck(first - second) };
  });
  rows.sort((x, y) => y.difference - x.difference);
  return { rows, ours: perCheck(a.total), floor: perCheck(b.total), difference: perCheck(a.total - b.total) };
}

if (require.main === module) {
  const [oursFile, floorFile, checks, frequency = '1999'] = process.argv.slice(2);
  if (!oursFile || !floorFile || !checks) {
    process.stderr.write('usage: node bench/dist/perf-shares.js OURS.txt FLOOR.txt CHECKS [FREQUENCY]\n');
    process.exit(2);
  }
  const compared = comparedShares(readFileSync(oursFile, 'utf8'), readFileSync(floorFile, 'utf8'), Number(checks), Number(frequency));
  process.stdout.write('| Where | first | second | first − second (µs a check) |\n|---|---|---|---|\n');
  for (const row of compared.rows) process.stdout.write(`| ${row.place} | ${row.ours} | ${row.floor} | ${row.difference} |\n`);
  process.stdout.write(`| **all** | ${compared.ours} | ${compared.floor} | ${compared.difference} |\n`);
}
