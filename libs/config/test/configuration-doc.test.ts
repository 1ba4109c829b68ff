import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');
 
const { render } = require(join(root, 'scripts', 'config-reference.js')) as { render(): string };

it('docs/configuration.md lists every setting with its real default', () => {
  const documented = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
  // If this fails, run: node scripts/config-reference.js --write
  expect(documented).toBe(render());
});
