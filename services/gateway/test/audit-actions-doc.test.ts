import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

// Every audit action the services write is named in docs/api.md's list of them ("Audit event"):
// a reader of the trail, or a webhook's consumer, can look each one up.

const root = join(__dirname, '..', '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

test('docs/api.md lists every audit action the services write', () => {
  const doc = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
  const list = doc.slice(doc.indexOf('<a id="audit-events"></a>'), doc.indexOf('## States'));
  const written = new Set<string>();
  for (const service of ['gateway', 'rollout', 'telemetry']) {
    for (const file of sources(join(root, 'services', service, 'src'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/action: '([a-z_]+\.[a-z_]+)'/g)) written.add(match[1]!);
    }
  }
  expect(written.size).toBeGreaterThan(20);
  expect([...written].filter((action) => !list.includes(`\`${action}\``)).sort()).toEqual([]);
});
