import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { PatchMaker } from '../../domain/ports';

/**
 * The format the service makes: what ESP-IDF's esp_delta_ota applies, a detools sequential patch
 * compressed with heatshrink, window 2^8 and lookahead 2^7 (device-sdk/src/ota_delta.h).
 */
export const DETOOLS_SEQUENTIAL_HEATSHRINK = 'detools-sequential-heatshrink-8-7';

export interface DetoolsSettings {
  /** The detools command (the build installs it pinned, scripts/ensure-built.mjs; the image at /opt/detools). */
  command: string;
  /** A run of detools past this is killed and the job fails. */
  timeoutMs: number;
}

/**
 * Patches made by detools' create_patch, each checked by detools' apply_patch, a second
 * implementation (Python, not the C the devices run) reading the patch back to the target's bytes.
 */
export class DetoolsPatchMaker implements PatchMaker {
  readonly format = DETOOLS_SEQUENTIAL_HEATSHRINK;

  constructor(private readonly settings: DetoolsSettings) {}

  async make(basePath: string, targetPath: string, patchPath: string): Promise<{ appliedSha256: string }> {
    await this.run(['create_patch', '--compression', 'heatshrink', '--heatshrink-window-sz2', '8', '--heatshrink-lookahead-sz2', '7', basePath, targetPath, patchPath]);
    const appliedPath = `${patchPath}.applied`;
    await this.run(['apply_patch', basePath, patchPath, appliedPath]);
    const hash = createHash('sha256');
    await pipeline(createReadStream(appliedPath), hash);
    return { appliedSha256: hash.digest('hex') };
  }

  private run(args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.settings.command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (data: Buffer) => (stderr = (stderr + data.toString()).slice(-500)));
      const timer = setTimeout(() => child.kill('SIGKILL'), this.settings.timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`detools could not be started (${this.settings.command}): ${error.message}`));
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(signal === 'SIGKILL' ? `detools ${args[0]} ran past PATCH_TIMEOUT_MS (${this.settings.timeoutMs} ms)` : `detools ${args[0]} exited ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`));
      });
    });
  }
}
