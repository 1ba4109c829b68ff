#!/usr/bin/env node
// The `otactl` command of a clone (`npx otactl`): committed, so that the install links it before
// anything is built, and running the compiled CLI once `npm run build` (or `npm test`) made it.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const cli = join(__dirname, '..', 'dist', 'cli.js');
if (!existsSync(cli)) {
  process.stderr.write('otactl: not built yet: run `npm run build` in the clone first\n');
  process.exit(1);
}
require(cli)
  .main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`otactl: ${error.message}\n`);
      process.exitCode = 1;
    },
  );
