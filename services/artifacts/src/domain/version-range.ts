/**
 * Affected versions as advisories write them (docs/api.md, "Exposure"): comparisons joined by `,`
 * (all must hold), alternatives by `||` (any may): `<3.6.3`, `>=2.0,<2.1.4`, `=1.2.3 || >=2.0,<2.0.7`.
 * A bare version means that version. Versions compare as ESP-IDF components and most C libraries
 * number them: dot-separated numbers (a missing one is 0, a leading `v` is ignored), and a
 * pre-release after `-` (`3.6.0-rc1`) comes before its release.
 */

export type VersionRange = ReadonlyArray<ReadonlyArray<{ op: Comparison; version: string }>>;
type Comparison = '<' | '<=' | '>' | '>=' | '=' | '!=';

export class InvalidVersionRange extends Error {}

const CLAUSE = /^(<=|>=|<|>|==|=|!=)?\s*([0-9A-Za-z][0-9A-Za-z.+_~-]*)$/;
const MAX_RANGE_LENGTH = 256;

export function parseVersionRange(text: string): VersionRange {
  if (text.length > MAX_RANGE_LENGTH) throw new InvalidVersionRange(`a version range is at most ${MAX_RANGE_LENGTH} characters`);
  const alternatives = text.split('||').map((alternative) =>
    alternative.split(',').map((clause) => {
      const match = CLAUSE.exec(clause.trim());
      if (!match || !comparable(match[2]!)) throw new InvalidVersionRange(`"${clause.trim()}" is not a comparison such as <3.6.3, >=2.0 or =1.2.3`);
      const op = (match[1] === '==' ? '=' : (match[1] ?? '=')) as Comparison;
      return { op, version: match[2]! };
    }),
  );
  return alternatives;
}

/** Whether `version` lies in the range; a version that names no number (NOASSERTION, '') never does. */
export function inRange(version: string, range: VersionRange): boolean {
  if (!comparable(version)) return false;
  return range.some((clauses) =>
    clauses.every(({ op, version: bound }) => {
      const order = compareVersions(version, bound);
      switch (op) {
        case '<':
          return order < 0;
        case '<=':
          return order <= 0;
        case '>':
          return order > 0;
        case '>=':
          return order >= 0;
        case '=':
          return order === 0;
        case '!=':
          return order !== 0;
      }
    }),
  );
}

/** A version that starts with a number, after an optional `v`. */
export function comparable(version: string): boolean {
  return /^v?\d/.test(version);
}

/** Negative, zero or positive, as `a` comes before, with or after `b`. */
export function compareVersions(a: string, b: string): number {
  const [mainA, preA] = split(a);
  const [mainB, preB] = split(b);
  for (let i = 0; i < Math.max(mainA.length, mainB.length); i += 1) {
    const order = compareParts(mainA[i] ?? '0', mainB[i] ?? '0');
    if (order !== 0) return order;
  }
  if (preA === undefined || preB === undefined) return preA === preB ? 0 : preA === undefined ? 1 : -1;
  const partsA = preA.split('.');
  const partsB = preB.split('.');
  for (let i = 0; i < Math.max(partsA.length, partsB.length); i += 1) {
    if (partsA[i] === undefined) return -1;
    if (partsB[i] === undefined) return 1;
    const order = compareParts(partsA[i]!, partsB[i]!);
    if (order !== 0) return order;
  }
  return 0;
}

/** The release's numbers and its pre-release, build metadata (`+…`) left out. */
function split(version: string): [string[], string | undefined] {
  const bare = version.replace(/^v/, '').split('+')[0]!;
  const dash = bare.indexOf('-');
  const main = dash < 0 ? bare : bare.slice(0, dash);
  return [main.split(/[._]/), dash < 0 ? undefined : bare.slice(dash + 1)];
}

function compareParts(a: string, b: string): number {
  const [numberA, numberB] = [/^\d+$/.test(a) ? Number(a) : NaN, /^\d+$/.test(b) ? Number(b) : NaN];
  if (!Number.isNaN(numberA) && !Number.isNaN(numberB)) return numberA - numberB;
  // A number comes before text (3.6.2 before 3.6.2a), and text compares as text.
  if (!Number.isNaN(numberA)) return -1;
  if (!Number.isNaN(numberB)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
