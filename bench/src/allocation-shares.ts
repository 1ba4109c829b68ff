// `node bench/dist/allocation-shares.js DIR [REQUESTS]`: what each process allocated, by the
// categories of profile-shares.ts, in the `.heapprofile` files a `npm run bench -- … --alloc-prof
// DIR` run wrote; per request when REQUESTS (the requests each process served) is given.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharesOf, type CpuProfile } from './profile-shares';

/** The parts of a V8 sampling heap profile this reads: a tree of frames, each with the bytes sampled in it. */
export interface HeapProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapProfileNode[];
}

/**
 * The heap profile in the shape of a CPU profile whose every frame has one sample of its bytes
 * (as microseconds), so that sharesOf charges bytes exactly as it charges time.
 */
export function asCpuProfile(head: HeapProfileNode): CpuProfile {
  const nodes: CpuProfile['nodes'] = [];
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  const visit = (node: HeapProfileNode) => {
    nodes.push({ id: node.id, callFrame: node.callFrame, children: node.children.map((child) => child.id) });
    if (node.selfSize > 0) {
      samples.push(node.id);
      timeDeltas.push(node.selfSize * 1000);
    }
    node.children.forEach(visit);
  };
  visit(head);
  return { nodes, samples, timeDeltas };
}

/** Bytes by category, and the functions that allocated most themselves. */
export function allocationsOf(head: HeapProfileNode, top = 10): { byCategory: Map<string, number>; topFunctions: Array<[string, number]> } {
  const byFunction = new Map<string, number>();
  const visit = (node: HeapProfileNode) => {
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/node_modules\//, '').replace(/^.*\/(services|libs|bench)\//, '$1/')}:${lineNumber + 1}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
    }
    node.children.forEach(visit);
  };
  visit(head);
  return { byCategory: sharesOf(asCpuProfile(head)), topFunctions: [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top) };
}

function main(dir: string, requests: number | undefined): void {
  const amount = (bytes: number) => (requests ? `${(bytes / 1024 / requests).toFixed(1)} KB a request` : `${(bytes / 2 ** 20).toFixed(1)} MiB`);
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.heapprofile')).sort()) {
    const { head } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { head: HeapProfileNode };
    const { byCategory, topFunctions } = allocationsOf(head);
    const total = [...byCategory.values()].reduce((sum, bytes) => sum + bytes, 0);
    console.log(`${file}: ${amount(total)}`);
    for (const [category, bytes] of [...byCategory].sort((a, b) => b[1] - a[1])) console.log(`  ${amount(bytes).padStart(18)}  ${category}`);
    console.log('  the functions that allocated most:');
    for (const [name, bytes] of topFunctions) console.log(`  ${amount(bytes).padStart(18)}  ${name}`);
  }
}

if (require.main === module) {
  const [dir, requests] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node bench/dist/allocation-shares.js DIR [REQUESTS] (the --alloc-prof DIR of a bench run)');
    process.exit(2);
  }
  main(dir, requests ? Number(requests) : undefined);
}
