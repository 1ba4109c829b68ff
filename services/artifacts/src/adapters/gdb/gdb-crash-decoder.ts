import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CrashFrame } from '../../domain/crash-model';
import type { CrashDecoder } from '../../domain/ports';

export interface GdbSettings {
  /** Debian's gdb-multiarch (the container image has it). */
  command: string;
  /** A run past this is killed and the crash is kept as read, with that reason. */
  timeoutMs: number;
}

/** Frames past this are not unwound: a corrupt stack could otherwise go on for long. */
const MAX_FRAMES = 32;
/** What gdb may print before it is stopped: the JSON of one backtrace is a few kilobytes. */
const MAX_OUTPUT_BYTES = 256 * 1024;
const MARKER = 'OTA-CRASH-JSON ';

/**
 * Run by gdb's Python: the crashed task's frames (the thread whose id is its TCB address, as the
 * core file's prstatus pid makes it) and its name from FreeRTOS's TCB, as Espressif's esp-coredump
 * reads them. Printed as one marked JSON line.
 */
const SCRIPT = `
import gdb, json
def crashed_thread(tcb):
    threads = [t for inf in gdb.inferiors() for t in inf.threads()]
    for t in threads:
        if tcb and t.ptid[1] == tcb:
            return t
    return threads[0] if threads else None
def frames_of(thread):
    thread.switch()
    out = []
    frame = gdb.newest_frame()
    while frame is not None and len(out) < ${MAX_FRAMES}:
        sal = frame.find_sal()
        out.append({"function": frame.name() or "", "file": sal.symtab.filename if sal.symtab else "", "line": sal.line or 0, "address": frame.pc()})
        try:
            frame = frame.older()
        except gdb.error:
            break
    return out
def task_name(tcb):
    try:
        return gdb.parse_and_eval("((TCB_t *)%d)->pcTaskName" % tcb).string(length=16).split("\\0")[0]
    except Exception:
        return ""
def decode(tcb):
    thread = crashed_thread(tcb)
    result = {"task": task_name(thread.ptid[1]) if thread else "", "frames": frames_of(thread) if thread else []}
    print("${MARKER}" + json.dumps(result))
`;

/**
 * Unwinds with gdb in batch mode, as Espressif's esp-coredump does with its own gdb: the core file
 * and the ELF in, the crashed task's frames out. gdb loads nothing it was not given: no init files,
 * no auto-loaded scripts from the ELF, no debuginfod.
 */
export class GdbCrashDecoder implements CrashDecoder {
  constructor(private readonly settings: GdbSettings) {}

  async decode(coreElfPath: string, appElfPath: string, crashedTcb: number | null): Promise<{ task: string; frames: CrashFrame[] }> {
    const scriptPath = join(dirname(coreElfPath), 'decode.py');
    await writeFile(scriptPath, SCRIPT);
    const output = await this.run([
      '--batch', '-nx', '-nh',
      '-iex', 'set auto-load off',
      '-iex', 'set debuginfod enabled off',
      '-iex', 'set pagination off',
      '-iex', 'set confirm off',
      '-ex', `source ${scriptPath}`,
      '-ex', `python decode(${crashedTcb ?? 0})`,
      appElfPath, coreElfPath,
    ]);
    const line = output.split('\n').find((text) => text.startsWith(MARKER));
    if (!line) throw new Error(`gdb printed no backtrace (${output.trim().split('\n').at(-1) ?? 'no output'})`);
    const parsed = JSON.parse(line.slice(MARKER.length)) as { task: string; frames: CrashFrame[] };
    // The outermost frame of a task is its entry's caller, 0: nothing to show.
    const frames = parsed.frames.filter((frame, i) => !(i > 0 && frame.address === 0 && !frame.function));
    return { task: parsed.task, frames };
  }

  private run(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.settings.command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' } });
      let output = '';
      let stderr = '';
      const take = (data: Buffer) => {
        output += data.toString();
        if (output.length > MAX_OUTPUT_BYTES) child.kill('SIGKILL');
      };
      child.stdout.on('data', take);
      child.stderr.on('data', (data: Buffer) => (stderr = (stderr + data.toString()).slice(-500)));
      const timer = setTimeout(() => child.kill('SIGKILL'), this.settings.timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`gdb could not be started (${this.settings.command}): ${error.message}`));
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (signal === 'SIGKILL') reject(new Error(output.length > MAX_OUTPUT_BYTES ? 'gdb printed more than a backtrace' : `gdb ran past GDB_TIMEOUT_MS (${this.settings.timeoutMs} ms)`));
        else if (code === 0) resolve(output);
        else reject(new Error(`gdb exited ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`));
      });
    });
  }
}
