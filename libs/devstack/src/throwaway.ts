import { join } from 'node:path';
import { loadConfig } from '@ota/config';
import { localStackSettings } from './start-settings';
import type { StackOptions } from './stack';

export interface ThrowawayStack {
  runId: string;
  /** Where the run's servers keep their data: .data/<kind>/<runId>. */
  dataDir: string;
  logDir: string;
  options: StackOptions;
}

/**
 * The options of a stack that one run starts for itself and throws away (tests, the fault suite,
 * the fuzzer): free ports, fresh data and database names, logs under .data/<kind>/<runId>/logs,
 * the local FerretDB on LOCAL_MONGODB_BACKEND, servers named by the environment used as they are.
 * OTA_KEEP_TEST_DATA=1 keeps the servers' data for reading afterwards.
 */
export function throwawayStack(rootDir: string, kind: string, serviceEnv: NodeJS.ProcessEnv = {}): ThrowawayStack {
  const runId = `${kind[0]}${Date.now().toString(36)}`;
  const dataDir = join(rootDir, '.data', kind, runId);
  const logDir = join(dataDir, 'logs');
  return {
    runId,
    dataDir,
    logDir,
    options: {
      rootDir,
      dataDir,
      ports: 'random',
      output: { logDir },
      env: process.env,
      databasePrefix: `ota_${runId}_`,
      ephemeral: process.env.OTA_KEEP_TEST_DATA !== '1',
      mongoBackend: loadConfig({ LOCAL_MONGODB_BACKEND: localStackSettings.LOCAL_MONGODB_BACKEND }).LOCAL_MONGODB_BACKEND,
      serviceEnv,
    },
  };
}
