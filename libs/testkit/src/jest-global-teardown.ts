import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningStack } from '@ota/devstack';
import { findTokensInLogs } from './issued-tokens';

/**
 * Stops the stack, then reads every log it wrote (the services log at debug level in tests) for
 * any raw token a test was given: finding one fails the run.
 */
export default async function globalTeardown(): Promise<void> {
  const running = (globalThis as { otaTestStack?: { stack: RunningStack; dataDir: string } }).otaTestStack;
  if (!running) return;
  await running.stack.stop();
  const scan = findTokensInLogs(join(running.dataDir, 'issued-tokens.txt'), join(running.dataDir, 'logs'));
  process.stderr.write(`\n[test stack] looked for ${scan.tokens} raw tokens in ${scan.files} log files: ${scan.sightings.length} found\n`);
  if (scan.sightings.length > 0) {
    const where = scan.sightings.slice(0, 20).map((sighting) => `${sighting.file}:${sighting.line} (token ${sighting.prefix}...)`);
    throw new Error(`raw tokens appear in the logs (kept in ${running.dataDir}):\n${where.join('\n')}`);
  }
  // Keep the logs of a failed run for reading; data of a passed run is of no further use.
  if (process.env.OTA_KEEP_TEST_DATA !== '1') rmSync(running.dataDir, { recursive: true, force: true });
}
