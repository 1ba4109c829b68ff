import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess, waitForPort, type ManagedProcess, type OutputMode } from './processes';

// A private PostgreSQL cluster for FerretDB's PostgreSQL backend. FerretDB v1 answers every
// filtered read and update with a scan on either backend, but PostgreSQL scans several times faster
// than SQLite and lets writes run concurrently, where SQLite has one writer per database.

/** The directory of Debian's PostgreSQL server binaries, newest version first, or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

const isRoot = () => process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user Debian creates. */
function asPostgres(command: string, args: string[]): [string, string[]] {
  return isRoot() ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', command, ...args]] : [command, args];
}

function postgresUid(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Where the cluster lives. As root it must be somewhere the `postgres` user can reach whatever the
 * permissions of the checkout's parent directories (a clone under /root, a 0700 temp directory):
 * its own home, in a directory named after `dataDir`.
 */
export function clusterHome(dataDir: string): string {
  if (!isRoot()) return dataDir;
  return join('/var/lib/postgresql/ota-local', createHash('sha256').update(dataDir).digest('hex').slice(0, 16));
}

export interface RunningPostgres {
  process: ManagedProcess;
  /** Over TCP, for tools (psql) and tests. */
  url: string;
  /**
   * Over the cluster's Unix socket, for FerretDB. On loopback TCP (MTU 64 KiB), a large answer to
   * a reader that falls behind closes the receive window, which with buffers of about two segments
   * the kernel reopens only on the sender's probe, 200 ms or more later: the slow calls of the pages
   * that read several buckets at a million devices (docs/performance.md). A Unix socket has no
   * window to close.
   */
  socketUrl: string;
  /** Deletes the cluster's files (for throwaway stacks); call after the process stopped. */
  removeData(): void;
}

export async function startPostgres(dataDir: string, host: string, port: number, output: OutputMode): Promise<RunningPostgres> {
  const bin = postgresBinDir();
  if (!bin) {
    throw new Error('PostgreSQL server binaries are missing (expected /usr/lib/postgresql/<version>/bin). Run "npm run build" as root to install them, or set LOCAL_MONGODB_BACKEND=sqlite.');
  }
  const home = clusterHome(dataDir);
  const clusterDir = join(home, 'cluster');
  const socketDir = join(home, 'socket');
  mkdirSync(socketDir, { recursive: true });
  if (isRoot()) {
    const { uid, gid } = postgresUid();
    for (const dir of [join(home, '..'), home, socketDir]) chownSync(dir, uid, gid);
  }
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    const [command, args] = asPostgres(join(bin, 'initdb'), ['-D', clusterDir, '-U', 'ferretdb', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
    const init = spawnSync(command, args, { encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`initdb failed:\n${init.stderr || init.stdout}`);
  }
  const [command, args] = asPostgres(join(bin, 'postgres'), [
    '-D',
    clusterDir,
    '-p',
    String(port),
    '-k',
    socketDir,
    '-c',
    `listen_addresses=${host}`,
    '-c',
    'max_connections=200',
    // Statement counts per request, which the benchmarks read (bench/src/store-statements.ts).
    '-c',
    'shared_preload_libraries=pg_stat_statements',
    // A new WAL segment is otherwise filled with 16 MiB of zeroes by the backend that needs it, and
    // every commit waits behind that write: on this machine's disk, stalls of 0.2-0.9 s every
    // segment (about every 30 s under a check load), which set the benchmarks' 99th percentiles
    // (docs/performance.md, "The tail that set s1's rate"). ext4 allocates the file as it is written.
    '-c',
    'wal_init_zero=off',
    // A commit is acknowledged before its WAL reaches the disk, which the WAL writer flushes within
    // three times wal_writer_delay (0.6 s): as a standalone MongoDB acknowledges a w:1 write before
    // its journal commit. Waiting for each flush put this disk's flush stalls (0.1-0.4 s, at random)
    // into every check and report in flight. A crash of PostgreSQL or of the machine may lose the
    // last 0.6 s of acknowledged writes, never corrupt the database (a crash of FerretDB or of a
    // service loses nothing: PostgreSQL still flushes them).
    '-c',
    'synchronous_commit=off',
  ]);
  const postgres = startProcess('postgres', command, args, process.env, output, 'SIGINT');
  await waitForPort(host, port, postgres, 60_000);
  await createStatementStats(bin, host, port, postgres);
  return {
    process: postgres,
    url: `postgres://ferretdb@${host}:${port}/postgres`,
    socketUrl: `postgres://ferretdb@/postgres?host=${encodeURIComponent(socketDir)}&port=${port}`,
    removeData: () => rmSync(home, { recursive: true, force: true }),
  };
}

/** pg_stat_statements in the database FerretDB uses; PostgreSQL may take a moment to accept logins after it listens. */
async function createStatementStats(bin: string, host: string, port: number, postgres: ManagedProcess): Promise<void> {
  let last = '';
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const result = spawnSync(join(bin, 'psql'), ['-h', host, '-p', String(port), '-U', 'ferretdb', '-d', 'postgres', '-Atqc', 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'], { encoding: 'utf8' });
    if (result.status === 0) return;
    last = result.stderr || result.stdout;
    if (postgres.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`could not enable pg_stat_statements in the local PostgreSQL: ${last.trim()}`);
}
