#!/usr/bin/env node
// Prints one closing line for CI, `tests: N passed, M failed`, summed over the JSON results that
// each jest run of .ci/run wrote (jest's own summary lines are not a form CI reads).
import { existsSync, readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) continue;
  const results = JSON.parse(readFileSync(file, 'utf8'));
  passed += results.numPassedTests;
  // A suite that failed to run (a compile error, a stack that did not start) counts as a failure.
  failed += results.numFailedTests + results.numRuntimeErrorTestSuites;
}
process.stdout.write(`tests: ${passed} passed, ${failed} failed\n`);
