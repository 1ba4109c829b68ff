import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  /** The last lines the process printed, for error messages when it dies. */
  recentOutput(): string;
  stop(graceMs?: number): Promise<void>;
  /** Ends the process with SIGKILL, as a crash or an OOM kill would, and waits for its exit. */
  kill(): Promise<void>;
  /** Starts the same command again, with the same arguments, environment and output. */
  relaunch(): ManagedProcess;
}

export type OutputMode = { kind: 'prefixed' } | { kind: 'file'; path: string };

/**
 * Spawns a long-running child whose output is prefixed on our stdout or written to a file.
 * `stopSignal` is what asks it to stop (PostgreSQL wants SIGINT for a fast shutdown).
 */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  output: OutputMode,
  stopSignal: NodeJS.Signals = 'SIGTERM',
): ManagedProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const recent: string[] = [];
  const file = output.kind === 'file' ? createWriteStream(output.path, { flags: 'a' }) : undefined;
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      for (const line of text.split('\n')) {
        if (!line) continue;
        recent.push(line);
        if (recent.length > 40) recent.shift();
        if (file) file.write(`${line}\n`);
        else process.stdout.write(`${name.padEnd(10)}| ${line}\n`);
      }
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => file?.end());
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    name,
    child,
    recentOutput: () => recent.join('\n'),
    async stop(graceMs = 10_000) {
      if (hasExited()) return;
      child.kill(stopSignal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (hasExited()) return;
      child.kill('SIGKILL');
      await exited;
    },
    relaunch() {
      if (!hasExited()) throw new Error(`${name} is still running; kill or stop it before relaunching`);
      return startProcess(name, command, args, env, output, stopSignal);
    },
  };
}

/** Resolves once host:port accepts TCP connections; rejects if the process dies or time runs out. */
export async function waitForPort(host: string, port: number, process: ManagedProcess | undefined, timeoutMs: number): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    if (process && (process.child.exitCode !== null || process.child.signalCode !== null)) {
      throw new Error(`${process.name} exited during start:\n${process.recentOutput()}`);
    }
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > giveUpAt) {
      throw new Error(`${process?.name ?? `${host}:${port}`} did not open ${host}:${port} within ${timeoutMs} ms\n${process?.recentOutput() ?? ''}`);
    }
    await sleep(100);
  }
}

/**
 * A free port for a test stack, drawn from below the kernel's ephemeral range, so that no outgoing
 * connection (which takes its local port from that range) can take it between this call and the
 * server's listen. Falls back to a port the kernel picks when the range leaves no room below.
 */
export async function freePort(): Promise<number> {
  const ephemeralLow = ephemeralRangeStart();
  for (let attempt = 0; attempt < 50 && ephemeralLow > 11_000; attempt += 1) {
    const candidate = 10_000 + Math.floor(Math.random() * (ephemeralLow - 10_000));
    if (await canListen(candidate)) return candidate;
  }
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 0;
  } catch {
    return 0;
  }
}

/** Whether a server could listen on host:port now (nothing else holds it). */
export function canListen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
