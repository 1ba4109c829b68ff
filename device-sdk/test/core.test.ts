import { spawnSync } from 'node:child_process';
import { sdkBinary } from './harness/device-process';

// The C core's unit suite (test/unit, fake ports around real crypto), built with AddressSanitizer
// and UndefinedBehaviorSanitizer: any sanitizer report ends it with a failure.

it('passes the core unit suite under the sanitizers', () => {
  const result = spawnSync(sdkBinary('ota_core_tests'), [], { encoding: 'utf8', timeout: 300_000 });
  const summary = /(\d+) passed, (\d+) failed/.exec(result.stdout);
  if (result.status !== 0 || !summary) throw new Error(`ota_core_tests exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  expect(Number(summary[2])).toBe(0);
  expect(Number(summary[1])).toBeGreaterThan(1000);
});
