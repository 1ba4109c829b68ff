// Writes the OpenAPI document the gateway serves to the file named by the first argument:
// `npm run openapi` keeps docs/openapi.json, which the console's types are generated from, current.
import { writeFileSync } from 'node:fs';
import { describeApi } from './app';

const target = process.argv[2];
if (!target) throw new Error('usage: node write-openapi.js <file>');
writeFileSync(target, `${JSON.stringify(describeApi(), null, 2)}\n`);
