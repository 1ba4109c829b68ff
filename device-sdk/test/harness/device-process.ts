import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');

/**
 * Where `npm test` builds the SDK (scripts/ensure-built.mjs): with gcc's AddressSanitizer and
 * UndefinedBehaviorSanitizer; the same for 32 bits (the unit suite only); and with clang's, whose
 * AddressSanitizer also finds a use of a returned function's stack (the client runs from that one).
 */
export const SDK_BUILDS = {
  gcc: join(root, '.build', 'device-sdk'),
  gcc32: join(root, '.build', 'device-sdk-m32'),
  clang: join(root, '.build', 'device-sdk-clang'),
} as const;

export function sdkBinary(name: string, build: keyof typeof SDK_BUILDS = 'gcc'): string {
  const path = join(SDK_BUILDS[build], name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run the tests with \`npm test\`, which builds the device SDK with CMake`);
  return path;
}

export interface DeviceOutcome {
  outcome: string;
  reason: string;
  /** Why the last update stopped because its offer no longer stood; "" when none did. */
  stopped: string;
  running_build: number;
  running_slot: number;
}

/**
 * The linux client (`ota-device --once`) as a process: started, killed with SIGKILL as a power cut
 * would, and started again on the same device directory until it settles.
 */
export class DeviceProcess {
  private child?: ChildProcess;
  private exited?: Promise<number | null>;
  private stdout = '';
  /** Runs once the killed process is gone and before power comes back (to damage what it left, say). */
  beforeRestart?: () => void;

  constructor(
    readonly dir: string,
    private readonly args: string[],
    private readonly token: string,
  ) {}

  start(): void {
    const log = createWriteStream(join(this.dir, '..', `${this.dir.split('/').pop()}.log`), { flags: 'a' });
    // The token travels in the environment, never on a command line that ps would show.
    const child = spawn(sdkBinary('ota-device', 'clang'), ['--dir', this.dir, '--once', ...this.args], {
      env: { PATH: process.env.PATH, OTA_TOKEN: this.token, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.stdout = '';
    child.stdout.on('data', (data: Buffer) => (this.stdout += data.toString()));
    child.stderr.pipe(log);
    this.child = child;
    // 'close', not 'exit': a process can exit before its last line was read from the pipe, and the
    // outcome is that last line (a CI run parsed an empty stdout of a run that had exited 0).
    this.exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
  }

  /** A power cut: the process dies at once, with whatever it had not yet saved. */
  async kill(): Promise<void> {
    this.child?.kill('SIGKILL');
    await this.exited;
  }

  /** Waits for the run to settle, restarting the device after a kill; fails past the deadline. */
  async settle(deadlineMs: number): Promise<DeviceOutcome> {
    const giveUpAt = Date.now() + deadlineMs;
    for (;;) {
      const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), Math.max(0, giveUpAt - Date.now())).unref());
      const code = await Promise.race([this.exited!, timer]);
      if (code === 'late') {
        await this.kill();
        throw new Error(`the device in ${this.dir} did not settle within ${deadlineMs} ms; its log is ${this.dir}.log`);
      }
      if (code === null) {
        // Killed by the test: power comes back.
        this.beforeRestart?.();
        this.start();
        continue;
      }
      if (code !== 0) throw new Error(`ota-device exited ${code}; its log is ${this.dir}.log`);
      return JSON.parse(this.stdout.trim().split('\n').pop() ?? '{}') as DeviceOutcome;
    }
  }

  /**
   * Waits until the slot being written holds `bytes` bytes (the linux port writes it unbuffered), so
   * that a kill lands after the device received what was sent; gives up after `timeoutMs`.
   */
  async waitForSlotBytes(bytes: number, timeoutMs: number): Promise<void> {
    const boot = readFileSync(join(this.dir, 'boot'), 'utf8');
    const inactive = /active=1/.test(boot) ? 0 : 1;
    const giveUpAt = Date.now() + timeoutMs;
    const size = () => (existsSync(join(this.dir, `slot${inactive}.bin`)) ? statSync(join(this.dir, `slot${inactive}.bin`)).size : 0);
    while (size() < bytes && Date.now() < giveUpAt) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  /** The bytes of the slot the boot pointer runs, and whether it runs as a trial. */
  runningImage(): { sha256: string; bytes: Buffer; trial: boolean } {
    const boot = readFileSync(join(this.dir, 'boot'), 'utf8');
    const active = /active=(\d)/.exec(boot)?.[1];
    const bytes = readFileSync(join(this.dir, `slot${active}.bin`));
    return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes, trial: /trial=1/.test(boot) };
  }
}
