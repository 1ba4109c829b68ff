import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterHome, freePort, listensOn, serviceArgsOf, SERVICE_HEAPS, startStack } from '@ota/devstack';

// `npm start` runs in the foreground, and Ctrl-C (SIGINT to its whole process group, as a terminal
// sends it) leaves no process of the stack running.

const rootDir = join(__dirname, '..', '..', '..');

function processesInGroup(pgid: number): string[] {
  const ps = spawnSync('ps', ['-eo', 'pgid=,pid=,args='], { encoding: 'utf8' });
  return ps.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && Number(line.split(/\s+/)[0]) === pgid);
}

it('serves a ready gateway, and Ctrl-C stops every process it started', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ota-start-'));
  const gatewayPort = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, LOCAL_STACK_PORTS: 'random', LOCAL_STACK_DATA_DIR: dataDir, GATEWAY_PORT: String(gatewayPort) };
  // Servers that the run was pointed at are used as they are; this test is about what start spawns.
  const start = spawn(process.execPath, [join(rootDir, 'libs', 'devstack', 'dist', 'start.js')], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  start.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  start.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!output.includes('The gateway is ready at') && Date.now() < deadline && start.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(output).toContain(`The gateway is ready at http://127.0.0.1:${gatewayPort}`);
    expect(output).toContain(`The console:    http://127.0.0.1:${gatewayPort}/console/`);
    const consolePage = await fetch(`http://127.0.0.1:${gatewayPort}/console/`);
    expect([consolePage.status, await consolePage.text()]).toEqual([200, expect.stringContaining('<div id="root">')]);
    const ready = await fetch(`http://127.0.0.1:${gatewayPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(processesInGroup(start.pid!).length).toBeGreaterThan(5);
    // Each service runs with its pod's heap (libs/devstack/src/service-heaps.ts).
    const commandLines = processesInGroup(start.pid!).map((line) => line.split(/\s+/).slice(2).join(' '));
    for (const service of Object.keys(SERVICE_HEAPS) as Array<keyof typeof SERVICE_HEAPS>) {
      expect([service, commandLines.filter((args) => args.endsWith(`${service}/dist/main.js`))]).toEqual([service, [[process.execPath, ...serviceArgsOf(rootDir, service)].join(' ')]]);
    }

    // The banner's admin commands work as printed, on the ports this stack took, from a shell that
    // knows nothing else of it.
    for (const label of ['Create a user:', 'Set a plan:']) {
      const command = output.split('\n').find((line) => line.startsWith(label))!.slice(label.length).trim();
      const ran = spawnSync('sh', ['-c', command.replace('you@example.com', 'banner@example.com')], { cwd: rootDir, env: { PATH: process.env.PATH, HOME: process.env.HOME }, encoding: 'utf8', timeout: 120_000 });
      expect({ label, status: ran.status, stderr: ran.stderr }).toMatchObject({ label, status: 0 });
    }

    // A second npm start of the same clone is refused in one line and starts nothing.
    const second = spawnSync(process.execPath, [join(rootDir, 'libs', 'devstack', 'dist', 'start.js')], { env, encoding: 'utf8', timeout: 60_000 });
    expect(second.status).toBe(1);
    expect(second.stderr.trim().split('\n')).toEqual([expect.stringContaining(`a stack is already running on ${dataDir} (process ${start.pid})`)]);
    expect((await fetch(`http://127.0.0.1:${gatewayPort}/readyz`)).status).toBe(200);

    process.kill(-start.pid!, 'SIGINT');
    await exited;
    // Children get a grace period to drain; give them a moment beyond the parent's exit.
    const settleBy = Date.now() + 15_000;
    while (processesInGroup(start.pid!).length > 0 && Date.now() < settleBy) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(processesInGroup(start.pid!)).toEqual([]);
  } finally {
    if (start.exitCode === null) process.kill(-start.pid!, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(clusterHome(join(dataDir, 'postgres')), { recursive: true, force: true });
  }
});

/** A program of someone else's that holds a port and answers every connection. */
async function squatter(): Promise<{ port: number; server: Server }> {
  const port = await freePort();
  const server = createServer((socket) => socket.end('not ours\n'));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, server };
}

it('refuses a taken gateway port in one line that names it, and leaves nothing running', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ota-start-'));
  const taken = await squatter();
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, LOCAL_STACK_PORTS: 'random', LOCAL_STACK_DATA_DIR: dataDir, GATEWAY_PORT: String(taken.port) };
    const start = spawn(process.execPath, [join(rootDir, 'libs', 'devstack', 'dist', 'start.js')], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    start.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // 'close' waits for the pipes to drain, so the stderr compared below is all of it.
    const code = await new Promise<number | null>((resolve) => start.once('close', (exitCode) => resolve(exitCode)));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      `npm start failed: port ${taken.port} (the gateway) is already in use by another program: stop that program, or set GATEWAY_PORT to a free port.`,
    ]);
    expect(processesInGroup(start.pid!)).toEqual([]);
  } finally {
    taken.server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('never goes on against a server it did not start: a taken FerretDB port is refused before anything starts', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ota-stack-'));
  const taken = await squatter();
  try {
    const { MONGODB_URI: _mongo, NATS_URL: _nats, S3_ENDPOINT: _s3, ...env } = process.env;
    await expect(
      startStack({
        rootDir,
        dataDir,
        ports: 'random',
        serverPorts: { mongo: taken.port },
        output: { logDir: join(dataDir, 'logs') },
        env,
        databasePrefix: 'ota_taken_',
        mongoBackend: 'sqlite',
        ephemeral: true,
      }),
    ).rejects.toThrow(`port ${taken.port} (FerretDB) is already in use by another program`);
    // Nothing was started: no process runs on this stack's data directory, and it is not locked.
    const running = spawnSync('ps', ['-eo', 'args='], { encoding: 'utf8' }).stdout.split('\n');
    expect(running.filter((args) => args.includes(dataDir))).toEqual([]);
    expect(existsSync(join(dataDir, 'stack.pid'))).toBe(false);
  } finally {
    taken.server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('tells whether a process is the one listening on a port', async () => {
  const taken = await squatter();
  const other = spawn('sleep', ['30']);
  try {
    expect(listensOn(process.pid, taken.port)).toBe(true);
    expect(listensOn(other.pid!, taken.port)).toBe(false);
  } finally {
    other.kill();
    taken.server.close();
  }
});
