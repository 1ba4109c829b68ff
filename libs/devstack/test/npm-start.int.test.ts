import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterHome, freePort } from '@ota/devstack';

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
    const ready = await fetch(`http://127.0.0.1:${gatewayPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(processesInGroup(start.pid!).length).toBeGreaterThan(5);

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
