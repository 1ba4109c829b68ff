import { partsOf, shareBefore } from '../src/id-space';

test('the parts of the id space are each read once, spread over it from the first parts on', () => {
  for (const count of [16, 256] as const) {
    const parts = partsOf(count);
    expect(new Set(parts).size).toBe(count);
    expect([...parts].sort()).toEqual(Array.from({ length: count }, (_, index) => index.toString(16).padStart(count === 16 ? 1 : 2, '0')));
    // However many have been read, they are spread evenly: each half, quarter and eighth of the id
    // space holds its share of them, give or take one.
    for (let read = 1; read <= count; read += 1) {
      for (const slices of [2, 4, 8]) {
        const perSlice = Array.from({ length: slices }, () => 0);
        for (const prefix of parts.slice(0, read)) perSlice[Math.floor(shareBefore(`${prefix.padEnd(6, '0')}`) * slices)]! += 1;
        expect(Math.max(...perSlice) - Math.min(...perSlice)).toBeLessThanOrEqual(1);
      }
    }
  }
  expect(partsOf(16).slice(0, 4)).toEqual(['0', '8', '4', 'c']);
  expect(partsOf(256).slice(0, 4)).toEqual(['00', '80', '40', 'c0']);
});
