import { readdirSync, readFileSync } from 'node:fs';

// CPU time and resident memory of a process and its descendants, read from /proc (Linux). A
// PostgreSQL server works in one child process per connection, so its tree is what counts.

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * Proportional set size: resident memory with each shared page divided among the processes that
 * map it. Summing RSS instead would count PostgreSQL's shared buffers once per backend.
 */
function pssBytes(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
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

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime (proc(5)).
    return { pid, ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined;
  }
}

function allProcesses(): ProcStat[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readStat(Number(name)))
    .filter((stat): stat is ProcStat => stat !== undefined);
}

export interface Usage {
  cpuMs: number;
  /** Resident memory as proportional set size (see pssBytes). */
  rssBytes: number;
}

/** The usage of each named process tree, summed over the tree. */
export function usageOf(roots: Record<string, number>): Record<string, Usage> {
  const processes = allProcesses();
  const childrenOf = new Map<number, ProcStat[]>();
  for (const stat of processes) childrenOf.set(stat.ppid, [...(childrenOf.get(stat.ppid) ?? []), stat]);
  const byPid = new Map(processes.map((stat) => [stat.pid, stat]));
  const result: Record<string, Usage> = {};
  for (const [name, pid] of Object.entries(roots)) {
    const usage: Usage = { cpuMs: 0, rssBytes: 0 };
    const queue = [byPid.get(pid)].filter((stat): stat is ProcStat => stat !== undefined);
    while (queue.length > 0) {
      const stat = queue.pop()!;
      usage.cpuMs += (stat.cpuTicks * 1000) / CLOCK_TICKS_PER_SECOND;
      usage.rssBytes += pssBytes(stat.pid);
      queue.push(...(childrenOf.get(stat.pid) ?? []));
    }
    result[name] = usage;
  }
  return result;
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
