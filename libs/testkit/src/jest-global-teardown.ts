import { rmSync } from 'node:fs';
import type { RunningStack } from '@ota/devstack';

export default async function globalTeardown(): Promise<void> {
  const running = (globalThis as { otaTestStack?: { stack: RunningStack; dataDir: string } }).otaTestStack;
  if (!running) return;
  await running.stack.stop();
  // Keep the logs of a failed run for reading; data of a passed run is of no further use.
  if (process.env.OTA_KEEP_TEST_DATA !== '1') rmSync(running.dataDir, { recursive: true, force: true });
}
