import { spawn } from 'node:child_process';
import { idleCpuOf, usageOf, usageOfInBackground } from './process-usage';

// The child burns 300 ms of its own CPU time (measured by itself, so a busy machine only makes it
// take longer), says so, and waits to be killed.
const CHILD = `
const start = process.cpuUsage();
const spent = () => { const used = process.cpuUsage(start); return (used.user + used.system) / 1000; };
while (spent() < 300);
console.log('busy');
setInterval(() => {}, 1000);`;

describe('process usage', () => {
  it('sums the CPU time and memory of a process and its children', async () => {
    const parent = spawn(process.execPath, ['-e', `require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(CHILD)}], { stdio: 'inherit' }); setInterval(() => {}, 1000);`], {
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve) => parent.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('busy') && resolve()));
      for (const usage of [usageOf({ tree: parent.pid! }).tree!, (await usageOfInBackground({ tree: parent.pid! })).tree!]) {
        expect(usage.cpuMs).toBeGreaterThanOrEqual(290);
        // Two Node.js processes hold well over 2 MiB each.
        expect(usage.rssBytes).toBeGreaterThan(4 * 2 ** 20);
      }
    } finally {
      process.kill(-parent.pid!, 'SIGKILL');
    }
  });

  it('counts what a process spends while it waits, not what it spent before', async () => {
    const child = spawn(process.execPath, ['-e', CHILD], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('busy') && resolve()));
      // Its 300 ms of work over a 500 ms wait would read 600 ms a second; a timer a second spends nearly nothing.
      expect((await idleCpuOf({ child: child.pid! }, 500)).child).toBeLessThan(100);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  });

  it('keeps counting the CPU time of a child that exited and was reaped', async () => {
    // The parent waits for its busy child to exit (reaping it), then says so and stays.
    const parent = spawn(
      process.execPath,
      ['-e', `require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(CHILD.replace('setInterval(() => {}, 1000);', ''))}], { stdio: 'ignore' }).on('exit', () => console.log('reaped')); setInterval(() => {}, 1000);`],
      { detached: true, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve) => parent.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('reaped') && resolve()));
      expect(usageOf({ tree: parent.pid! }).tree!.cpuMs).toBeGreaterThanOrEqual(290);
      expect((await usageOfInBackground({ tree: parent.pid! })).tree!.cpuMs).toBeGreaterThanOrEqual(290);
    } finally {
      process.kill(-parent.pid!, 'SIGKILL');
    }
  });
});
