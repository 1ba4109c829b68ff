import { jsonDepth, jsonShapeProblem, MAX_JSON_DEPTH } from './json-limits';

const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = i % 2 ? { a: value } : [value];
  return value;
};

describe('the JSON shape limits', () => {
  it('accept a body nested up to the limit, and refuse one level more', () => {
    expect(jsonShapeProblem({ detail: nested(MAX_JSON_DEPTH - 1) })).toBeUndefined();
    expect(jsonShapeProblem({ detail: nested(MAX_JSON_DEPTH) })).toMatch(/deeper than 32 levels/);
  });

  it('measure 100,000 levels without overflowing the stack', () => {
    expect(jsonShapeProblem(nested(100_000))).toMatch(/deeper/);
    expect(jsonDepth(nested(100_000), 4)).toBe(5);
  });

  it('refuse a body of too many values', () => {
    expect(jsonShapeProblem({ list: Array.from({ length: 9_998 }, () => 0) })).toBeUndefined();
    expect(jsonShapeProblem({ list: Array.from({ length: 10_000 }, () => 0) })).toMatch(/more than 10000 values/);
  });

  it('count depth as the documents do', () => {
    expect(jsonDepth(5, 4)).toBe(0);
    expect(jsonDepth({}, 4)).toBe(1);
    expect(jsonDepth({ a: { b: [1] } }, 4)).toBe(3);
  });
});
