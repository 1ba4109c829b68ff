import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** A TCP socket a process listens on. */
export interface Listener {
  pid: number;
  command: string;
  address: string;
  port: number;
}

/**
 * The TCP sockets that the processes below the test run listen on, from /proc: every descendant of
 * the outermost jest process (the stack started by the global setup, and whatever a test started).
 */
export function testRunListeners(): Listener[] {
  const root = outermostJest(process.pid);
  const pids = descendantsOf(root);
  const listening = new Map<string, { address: string; port: number }>();
  for (const [file, parse] of [['/proc/net/tcp', ipv4Of], ['/proc/net/tcp6', ipv6Of]] as const) {
    for (const line of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // State 0A is LISTEN.
      if (fields[3] !== '0A') continue;
      const [host, port] = fields[1]!.split(':');
      listening.set(fields[9]!, { address: parse(host!), port: parseInt(port!, 16) });
    }
  }
  const found: Listener[] = [];
  for (const pid of pids) {
    for (const inode of socketInodesOf(pid)) {
      const socket = listening.get(inode);
      if (socket) found.push({ pid, command: commandOf(pid), ...socket });
    }
  }
  return found;
}

/** Whether an address is on this machine alone: 127.0.0.0/8, ::1, or 127.x mapped into IPv6. */
export function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.');
}

function outermostJest(pid: number): number {
  let top = pid;
  for (let parent = parentOf(top); parent > 1 && commandOf(parent).includes('jest'); parent = parentOf(parent)) top = parent;
  return top;
}

function parentOf(pid: number): number {
  const stat = readOr(`/proc/${pid}/stat`);
  // The command sits in parentheses and may hold spaces: the fields after it are what is read.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? 0);
}

function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(Number(entry));
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found = [root];
  for (let i = 0; i < found.length; i++) found.push(...(children.get(found[i]!) ?? []));
  return found;
}

function socketInodesOf(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes: string[] = [];
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.push(match[1]!);
    } catch {
      // The descriptor closed while it was read.
    }
  }
  return inodes;
}

function commandOf(pid: number): string {
  return readOr(`/proc/${pid}/cmdline`).replaceAll('\0', ' ').trim();
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** /proc/net/tcp's address: four bytes in host order (little-endian here). */
function ipv4Of(hex: string): string {
  return [3, 2, 1, 0].map((byte) => parseInt(hex.slice(byte * 2, byte * 2 + 2), 16)).join('.');
}

/** /proc/net/tcp6's address: four 32-bit words, each in host order. */
function ipv6Of(hex: string): string {
  const bytes: number[] = [];
  for (let word = 0; word < 4; word++) {
    const part = hex.slice(word * 8, word * 8 + 8);
    for (const byte of [3, 2, 1, 0]) bytes.push(parseInt(part.slice(byte * 2, byte * 2 + 2), 16));
  }
  if (bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return `::ffff:${bytes.slice(12).join('.')}`;
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!).toString(16));
  const text = groups.join(':');
  if (text === '0:0:0:0:0:0:0:0') return '::';
  if (text === '0:0:0:0:0:0:0:1') return '::1';
  return text;
}
