import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

// CPU time and resident memory of a process and its descendants, read from /proc (Linux). A
// PostgreSQL server works in one child process per connection, so its tree is what counts.

const CLOCK_TICKS_PER_SECOND = 100;

/** The `Pss:` of a process's smaps_rollup text, in bytes. */
function pssOf(smapsRollup: string): number {
  const match = /^Pss:\s+(\d+) kB/m.exec(smapsRollup);
  return match ? Number(match[1]) * 1024 : 0;
}

interface ProcStat {
  pid: number;
  ppid: number;
  /**
   * User and system CPU time, in clock ticks, its own and that of the children it has reaped: a
   * PostgreSQL backend that exits between two readings (FerretDB closes idle connections) takes
   * its time into the postmaster's, where it is still counted, instead of out of the tree.
   */
  cpuTicks: number;
}

function statOf(pid: number, text: string): ProcStat {
  // The command name is in parentheses and may hold spaces: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime (proc(5)).
  return { pid, ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) };
}

export interface Usage {
  cpuMs: number;
  /**
   * Resident memory as proportional set size: each shared page divided among the processes that
   * map it. Summing RSS instead would count PostgreSQL's shared buffers once per backend.
   */
  rssBytes: number;
}

/** The processes of each named tree, found in `processes`. */
function treesOf(roots: Record<string, number>, processes: readonly ProcStat[]): Record<string, ProcStat[]> {
  const childrenOf = new Map<number, ProcStat[]>();
  for (const stat of processes) childrenOf.set(stat.ppid, [...(childrenOf.get(stat.ppid) ?? []), stat]);
  const byPid = new Map(processes.map((stat) => [stat.pid, stat]));
  const trees: Record<string, ProcStat[]> = {};
  for (const [name, pid] of Object.entries(roots)) {
    const tree: ProcStat[] = [];
    const queue = [byPid.get(pid)].filter((stat): stat is ProcStat => stat !== undefined);
    while (queue.length > 0) {
      const stat = queue.pop()!;
      tree.push(stat);
      queue.push(...(childrenOf.get(stat.pid) ?? []));
    }
    trees[name] = tree;
  }
  return trees;
}

function summed(trees: Record<string, ProcStat[]>, pssBytes: (pid: number) => number): Record<string, Usage> {
  return Object.fromEntries(
    Object.entries(trees).map(([name, tree]) => [
      name,
      { cpuMs: tree.reduce((sum, stat) => sum + (stat.cpuTicks * 1000) / CLOCK_TICKS_PER_SECOND, 0), rssBytes: tree.reduce((sum, stat) => sum + pssBytes(stat.pid), 0) },
    ]),
  );
}

/** The text of a /proc file, or undefined when the process is gone. */
function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The usage of each named process tree, summed over the tree. */
export function usageOf(roots: Record<string, number>): Record<string, Usage> {
  const processes = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      const text = readProc(`/proc/${name}/stat`);
      return text === undefined ? [] : [statOf(Number(name), text)];
    });
  return summed(treesOf(roots, processes), (pid) => pssOf(readProc(`/proc/${pid}/smaps_rollup`) ?? ''));
}

/**
 * usageOf, with every /proc file read off the event loop (in libuv's threads). A smaps_rollup read
 * walks the process's page tables in the kernel: over a stack's processes, a sample held the
 * reader's loop 25 to 80 ms (s16 at 100,000 devices), which a call timed meanwhile could wait.
 */
export async function usageOfInBackground(roots: Record<string, number>): Promise<Record<string, Usage>> {
  const readText = (path: string) => readFile(path, 'utf8').catch(() => undefined);
  const names = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(names.map(async (name) => {
    const text = await readText(`/proc/${name}/stat`);
    return text === undefined ? [] : [statOf(Number(name), text)];
  }));
  const trees = treesOf(roots, stats.flat());
  const pids = Object.values(trees).flatMap((tree) => tree.map((stat) => stat.pid));
  const pss = new Map(await Promise.all(pids.map(async (pid) => [pid, pssOf((await readText(`/proc/${pid}/smaps_rollup`)) ?? '')] as const)));
  return summed(trees, (pid) => pss.get(pid) ?? 0);
}

/** CPU milliseconds a second each tree spent over `ms` (idle, when nothing is asked of it meanwhile). */
export async function idleCpuOf(roots: Record<string, number>, ms: number): Promise<Record<string, number>> {
  const before = await usageOfInBackground(roots);
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = await usageOfInBackground(roots);
  return Object.fromEntries(Object.keys(after).map((name) => [name, Math.round(((after[name]!.cpuMs - (before[name]?.cpuMs ?? 0)) / (ms / 1000)) * 10) / 10]));
}

/** CPU milliseconds each tree spent between two readings, per request; resident memory at the end. */
export function perRequest(before: Record<string, Usage>, after: Record<string, Usage>, requests: number) {
  const result: Record<string, { cpuMsPerRequest: number; rssMiB: number }> = {};
  for (const name of Object.keys(after)) {
    const spent = after[name]!.cpuMs - (before[name]?.cpuMs ?? 0);
    result[name] = {
      cpuMsPerRequest: Math.round((spent / Math.max(1, requests)) * 1000) / 1000,
      rssMiB: Math.round((after[name]!.rssBytes / 2 ** 20) * 10) / 10,
    };
  }
  return result;
}
