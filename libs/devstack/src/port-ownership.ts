import { readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canListen } from './processes';

// A local stack must never go on against a server it did not start: a taken port would otherwise
// let the wait for our server's port succeed because another program answers (another PostgreSQL
// on 5433, a developer's own MongoDB on 27017 or NATS on 4222), and the services would write into
// it. Two checks: every port is free before anything starts, and once a server answers, the socket
// listening on its port belongs to our child (a port can still be taken between the two).

export class PortTaken extends Error {
  override readonly name = 'PortTaken';
}

export interface PlannedPort {
  /** Who was to listen there, as a person would name it. */
  owner: string;
  port: number;
  /** What the person can change to move it, e.g. `set GATEWAY_PORT to a free port`. */
  remedy: string;
}

/** Throws one PortTaken naming the first port of `planned` that something else already holds. */
export async function ensurePortsFree(host: string, planned: PlannedPort[]): Promise<void> {
  for (const { owner, port, remedy } of planned) {
    if (!(await canListen(port, host))) {
      throw new PortTaken(`port ${port} (${owner}) is already in use by another program: stop that program, or ${remedy}.`);
    }
  }
}

/** The inodes of the TCP sockets listening on `port`, from /proc/net; undefined where there is no /proc. */
function listeningSocketInodes(port: number): Set<string> | undefined {
  const inodes = new Set<string>();
  let readAny = false;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
      readAny = true;
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
      const localPort = fields[1]?.split(':')[1];
      if (localPort && Number.parseInt(localPort, 16) === port && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  return readAny ? inodes : undefined;
}

/**
 * Whether process `pid` holds the socket listening on `port`: true or false where Linux's /proc
 * can tell, undefined where it cannot (another system, or a process we may not inspect).
 */
export function listensOn(pid: number, port: number): boolean | undefined {
  const inodes = listeningSocketInodes(port);
  if (!inodes) return undefined;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return true;
    } catch {
      // The descriptor closed while we looked.
    }
  }
  return false;
}

/** Throws PortTaken unless our child `pid` is what answers on `port`. */
export function ensureListenerIsOurs(pid: number, planned: PlannedPort): void {
  if (listensOn(pid, planned.port) === false) {
    throw new PortTaken(
      `port ${planned.port} (${planned.owner}) is answered by another program, not by the ${planned.owner} this command started: stop that program, or ${planned.remedy}.`,
    );
  }
}

/**
 * Takes the stack's data directory for this process, so that a second `npm start` of the same
 * clone is refused with one clear line instead of fighting the first over its ports and files.
 * A lock left by a process that no longer runs is taken over. Returns the release function.
 */
export function lockDataDir(dataDir: string): () => void {
  const lockFile = join(dataDir, 'stack.pid');
  try {
    writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = Number(readFileSync(lockFile, 'utf8').trim());
    if (holder && holder !== process.pid && isRunning(holder)) {
      throw new PortTaken(
        `a stack is already running on ${dataDir} (process ${holder}): stop it first (Ctrl-C in its terminal), or give this one LOCAL_STACK_DATA_DIR and LOCAL_STACK_PORTS=random of its own.`,
      );
    }
    writeFileSync(lockFile, String(process.pid));
  }
  return () => rmSync(lockFile, { force: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
