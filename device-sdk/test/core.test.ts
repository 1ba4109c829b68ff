import { spawnSync } from 'node:child_process';
import { sdkBinary } from './harness/device-process';

// The C core's unit suite (test/unit, fake ports around real crypto), built three ways with
// AddressSanitizer and UndefinedBehaviorSanitizer: by gcc for 64 bits, by gcc for 32 bits (an
// ESP32's size_t and long), and by clang with use-after-return detection. Any sanitizer report
// ends it with a failure.

it.each(['gcc', 'gcc32', 'clang'] as const)('passes the core unit suite under the sanitizers (%s build)', (build) => {
  const result = spawnSync(sdkBinary('ota_core_tests', build), [], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, ASAN_OPTIONS: 'detect_stack_use_after_return=1' },
  });
  const summary = /(\d+) passed, (\d+) failed/.exec(result.stdout);
  if (result.status !== 0 || !summary) throw new Error(`ota_core_tests (${build}) exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  expect(Number(summary[2])).toBe(0);
  expect(Number(summary[1])).toBeGreaterThan(1000);
});
