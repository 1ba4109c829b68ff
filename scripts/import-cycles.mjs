// `node scripts/import-cycles.mjs [DIR...]`: the import circles among the repository's TypeScript
// sources (or those under each DIR), type-only imports included (eslint's import-x/no-cycle leaves
// those out: they cost nothing at run time, but a type in the wrong file is a seam a reader trips
// on). Prints each circle and exits 1 when there is one. `npm run lint` runs it on the repository;
// deploy/test/import-cycles.test.ts shows that it finds a type-only circle.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_DIRS = ['services', 'libs', 'bench', 'deploy'];
const SKIPPED = new Set(['node_modules', 'dist', 'generated', '.data']);

function sourcesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourcesUnder(path);
    return /\.(ts|tsx)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative import names, as TypeScript would find it; undefined for a package or a missing file. */
function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Every file's relative imports, value and type alike. */
export function importGraph(files) {
  const graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    graph.set(file, [...new Set(importedFiles.map((imported) => resolveImport(file, imported.fileName)).filter(Boolean))]);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each a circle or several. */
export function circles(graph) {
  let index = 0;
  const indexOf = new Map();
  const lowOf = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (file) => {
    indexOf.set(file, index);
    lowOf.set(file, index);
    index += 1;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        lowOf.set(file, Math.min(lowOf.get(file), lowOf.get(next)));
      } else if (onStack.has(next)) {
        lowOf.set(file, Math.min(lowOf.get(file), indexOf.get(next)));
      }
    }
    if (lowOf.get(file) === indexOf.get(file)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!indexOf.has(file)) visit(file);
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.length > 2 ? process.argv.slice(2).map((dir) => resolve(dir)) : SOURCE_DIRS.map((dir) => join(root, dir));
  const files = dirs.flatMap((dir) => sourcesUnder(dir));
  const found = circles(importGraph(files));
  for (const component of found) process.stderr.write(`import circle: ${component.map((file) => relative(root, file)).join(' ⇄ ')}\n`);
  if (found.length > 0) process.exit(1);
  process.stdout.write(`no import circle among ${files.length} source files, type-only imports included\n`);
}
