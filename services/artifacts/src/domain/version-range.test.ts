import { compareVersions, InvalidVersionRange, inRange, parseVersionRange } from './version-range';

test('versions compare by their numbers, a pre-release before its release', () => {
  const ordered = ['1.0.0-rc1', '1.0.0-rc2', '1.0', '1.0.1', 'v1.2', '1.10.0', '2.0.0-alpha.1', '2.0.0-alpha.2', '2.0.0', '2.0.0a', '3.6.2', '3.6.3'];
  for (let i = 0; i + 1 < ordered.length; i += 1) expect([ordered[i], ordered[i + 1], Math.sign(compareVersions(ordered[i]!, ordered[i + 1]!))]).toEqual([ordered[i], ordered[i + 1], -1]);
  expect(compareVersions('1.0', '1.0.0')).toBe(0);
  expect(compareVersions('1.2.3+build.7', '1.2.3')).toBe(0);
});

test('a range is comparisons joined by commas, alternatives by ||', () => {
  const below = parseVersionRange('<3.6.3');
  expect(['3.6.2', '3.6.3', '3.6.3-rc1', '2.28.8', '4.0.0'].map((version) => inRange(version, below))).toEqual([true, false, true, true, false]);
  const window = parseVersionRange('>=2.0, <2.1.4');
  expect(['1.9.9', '2.0', '2.1.3', '2.1.4'].map((version) => inRange(version, window))).toEqual([false, true, true, false]);
  const either = parseVersionRange('=1.2.3 || >=2.0,<2.0.7');
  expect(['1.2.3', '1.2.4', '2.0.6', '2.0.7'].map((version) => inRange(version, either))).toEqual([true, false, true, false]);
  expect(inRange('5.1', parseVersionRange('5.1.0'))).toBe(true);
  expect(inRange('5.1', parseVersionRange('!=5.1.0'))).toBe(false);
  // A version that names no number is in no range.
  for (const unknown of ['NOASSERTION', '', 'latest']) expect(inRange(unknown, parseVersionRange('<99'))).toBe(false);
});

test('anything else is refused with what a range looks like', () => {
  for (const bad of ['', '<', '< ', '~>1.2', '>=1.0,', 'abc', '<1.0 >2.0', 'x'.repeat(300)]) {
    expect(() => parseVersionRange(bad)).toThrow(InvalidVersionRange);
  }
});
