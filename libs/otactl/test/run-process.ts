import { spawn, type SpawnOptions } from 'node:child_process';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, as a pipeline would, collecting what it printed. */
export function runProcess(command: string, args: readonly string[], options: Pick<SpawnOptions, 'cwd' | 'env'>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
