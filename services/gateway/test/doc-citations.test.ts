import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

// The repository explains itself: code and docs cite the documents under docs/ (docs/api.md is the
// contract), never a document the repository does not hold, and every `docs/<name>.md, "Section"`
// they cite names a section that exists there (a heading, or a bold paragraph title).

const root = join(__dirname, '..', '..', '..');
const SOURCE_DIRS = ['services', 'libs', 'proto', 'device-sdk', 'bench', 'scripts', 'deploy', 'helm', 'docs'];
const EXTENSIONS = /\.(ts|tsx|mjs|js|c|h|proto|md|yaml|yml)$/;
const SKIPPED = new Set(['node_modules', 'dist', 'gen', 'generated', 'build', '.vite']);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return EXTENSIONS.test(name) ? [path] : [];
  });
}

const ROOT_FILES = ['README.md', 'eslint.config.mjs', 'jest.config.js', 'package.json'];
const files = [...SOURCE_DIRS.flatMap((dir) => filesUnder(join(root, dir))), ...ROOT_FILES.map((name) => join(root, name))].filter((path) => path !== __filename);
const text = new Map(files.map((path) => [relative(root, path), readFileSync(path, 'utf8')]));

it('cites no document outside the repository', () => {
  const outside = /\bspec(ification)? (section )?\d|\bdecisions\.md\b|\bservice-spec\b|\bshared\/(spec|STYLE|hooks)|\bSTYLE\.md\b/i;
  const found = [...text].flatMap(([path, content]) =>
    content
      .split('\n')
      .map((line, index) => ({ line, at: `${path}:${index + 1}` }))
      .filter(({ line }) => outside.test(line))
      .map(({ at, line }) => `${at}: ${line.trim()}`),
  );
  expect(found).toEqual([]);
});

it('cites only sections that exist', () => {
  const docs = new Map(readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => [name, readFileSync(join(root, 'docs', name), 'utf8')]));
  const titles = (doc: string) =>
    new Set([
      // A heading as it reads, and without its number and what follows a colon ("3. Report each step: `POST …`").
      ...[...doc.matchAll(/^#+ (.+)$/gm)].flatMap((match) => [match[1]!.trim(), match[1]!.replace(/^\d+\. /, '').replace(/: .*$/, '').trim()]),
      ...[...doc.matchAll(/\*\*([^*]+?)\.?\*\*/g)].map((match) => match[1]!.trim()),
    ]);
  const broken: string[] = [];
  let citations = 0;
  for (const [path, content] of text) {
    for (const match of content.matchAll(/(?:docs\/)?([a-z-]+)\.md(?:'s|,)? "([^"\n]+)"(?: and "([^"\n]+)")?/g)) {
      const doc = docs.get(`${match[1]}.md`);
      if (!doc) continue;
      citations += 1;
      for (const cited of [match[2], match[3]].filter((section) => section !== undefined)) {
        if (!titles(doc).has(cited)) broken.push(`${path}: ${match[0]}`);
      }
    }
  }
  expect(broken).toEqual([]);
  expect(citations).toBeGreaterThan(40);
});
