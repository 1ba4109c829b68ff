import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api } from '@ota/testkit';

it('docs/api.md lists every operation of the OpenAPI document', async () => {
  const guide = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'api.md'), 'utf8');
  const document = await api<{ openapi: string; paths: Record<string, Record<string, unknown>> }>('GET', '/api/v1/openapi.json');
  expect(document.status).toBe(200);
  expect(document.body.openapi).toBe('3.1.0');
  const missing = Object.entries(document.body.paths).flatMap(([path, methods]) =>
    Object.keys(methods)
      .map((method) => `| ${method.toUpperCase()} | \`${path}\` |`)
      .filter((row) => !guide.includes(row)),
  );
  expect(missing).toEqual([]);
});

it('docs/api.md gives each operation in a project the role the OpenAPI document says it needs', async () => {
  const guide = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'api.md'), 'utf8');
  const document = await api<{ paths: Record<string, Record<string, { 'x-role'?: string }>> }>('GET', '/api/v1/openapi.json');
  const rows = Object.entries(document.body.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ row: `| ${method.toUpperCase()} | \`${path}\` |`, role: operation['x-role'] ?? '—' })),
  );
  const wrong = rows.filter(({ row, role }) => {
    const line = guide.split('\n').find((candidate) => candidate.startsWith(row));
    return !line?.trimEnd().endsWith(`| ${role} |`);
  });
  expect(wrong).toEqual([]);
  expect(rows.filter(({ role }) => role !== '—').length).toBeGreaterThan(40);
});
