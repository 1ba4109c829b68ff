import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The import-circle check that `npm run lint` runs (scripts/import-cycles.mjs): it must find a
// circle made of type-only imports, which eslint's import-x/no-cycle does not see, and pass the
// repository as it is.

const root = join(__dirname, '..', '..');
const check = (dirs: string[]) => spawnSync(process.execPath, [join(root, 'scripts', 'import-cycles.mjs'), ...dirs], { encoding: 'utf8' });

it('finds a circle of type-only imports, and none without it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ota-cycles-'));
  try {
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b';\nexport interface A { b: B }\n");
    writeFileSync(join(dir, 'b.ts'), "import type { A } from './a';\nexport interface B { a?: A }\n");
    const circled = check([dir]);
    expect(circled.status).toBe(1);
    expect(circled.stderr).toMatch(/import circle: .*a\.ts ⇄ .*b\.ts/);
    writeFileSync(join(dir, 'b.ts'), 'export interface B { name: string }\n');
    expect(check([dir]).status).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('finds no import circle in the repository', () => {
  const repository = check([]);
  expect([repository.status, repository.stderr]).toEqual([0, '']);
});
