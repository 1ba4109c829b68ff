import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// client-contract.ts holds otactl to the OpenAPI document at compile time; this compiles it.

const otactl = join(__dirname, '..');
const tsc = (project: string) => spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', project], { cwd: otactl, encoding: 'utf8' });

it('compiles otactl with every call the document does not have refused', () => {
  const compiled = tsc(join(otactl, 'tsconfig.contract.json'));
  expect([compiled.status, compiled.stdout]).toEqual([0, '']);
});

it('fails when a call marked as refused is one the document has', () => {
  const dir = mkdtempSync(join(otactl, '.contract-probe-'));
  try {
    writeFileSync(
      join(dir, 'probe.ts'),
      "import type { Api } from '../src/client';\nexport function probe(api: Api): void {\n  // @ts-expect-error a call the document does have\n  void api.GET('/api/v1/projects/{id}/deployments/', { params: { path: { id: '' } } });\n}\n",
    );
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.contract.json', include: ['../src', 'probe.ts'], exclude: ['../src/**/*.test.ts'] }));
    const compiled = tsc(join(dir, 'tsconfig.json'));
    expect(compiled.status).not.toBe(0);
    expect(compiled.stdout).toContain("Unused '@ts-expect-error' directive");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
