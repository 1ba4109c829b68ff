import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The previous release's compatibility is fenced: each piece is marked PREVIOUS RELEASE where it
// lives, and docs/architecture.md ("What the next release deletes") lists every file that holds
// one, so that the next release deletes them from one list.

const root = join(__dirname, '..', '..');
const MARKER = 'PREVIOUS RELEASE';

function listedFiles(): string[] {
  const architecture = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const start = architecture.indexOf('### What the next release deletes');
  expect(start).toBeGreaterThan(0);
  const section = architecture.slice(start, architecture.indexOf('\n## ', start));
  return [...new Set([...section.matchAll(/`((?:services|libs|proto)\/[^`]+\.(?:ts|proto))`/g)].map((match) => match[1]!))].sort();
}

function markedFiles(): string[] {
  // Tracked and new source files alike; generated code (ignored by git) is left out.
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'services', 'libs', 'proto'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => /\.(ts|tsx|proto)$/.test(file) && !/\.test\.tsx?$/.test(file) && !file.includes('/generated/') && existsSync(join(root, file)));
  return files.filter((file) => readFileSync(join(root, file), 'utf8').includes(MARKER)).sort();
}

it('lists every file that holds the previous release, and marks every file it lists', () => {
  const listed = listedFiles();
  expect(listed.length).toBeGreaterThan(0);
  expect(markedFiles()).toEqual(listed);
});
