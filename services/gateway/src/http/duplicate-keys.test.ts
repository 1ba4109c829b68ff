import { firstDuplicateKey } from './duplicate-keys';

describe('a repeated key in a JSON body', () => {
  it('is found at the top level, as JSON.parse would have hidden it', () => {
    expect(firstDuplicateKey('{"action":"cancel","action":"ramp"}')).toEqual(['action']);
    expect(JSON.parse('{"action":"cancel","action":"ramp"}')).toEqual({ action: 'ramp' });
  });

  it('is found inside nested objects and arrays, with the path to it', () => {
    expect(firstDuplicateKey('{"guardrails":{"failure_threshold":{"percent":5,"percent":50}}}')).toEqual(['guardrails', 'failure_threshold', 'percent']);
    expect(firstDuplicateKey('{"items":[{"a":1},{"b":2,"b":3}]}')).toEqual(['items', '1', 'b']);
  });

  it('compares keys as decoded, escapes included', () => {
    expect(firstDuplicateKey('{"a":1,"\\u0061":2}')).toEqual(['a']);
    expect(firstDuplicateKey('{"a\\"b":1,"a\\"b":2}')).toEqual(['a"b']);
  });

  it('is not confused by equal keys in different objects, keys inside strings, or escaped quotes', () => {
    expect(firstDuplicateKey('{"a":{"x":1},"b":{"x":1}}')).toBeUndefined();
    expect(firstDuplicateKey('{"a":"\\"a\\":1","b":["a","a"]}')).toBeUndefined();
    expect(firstDuplicateKey('[{"a":1},{"a":1}]')).toBeUndefined();
    expect(firstDuplicateKey('{}')).toBeUndefined();
    expect(firstDuplicateKey('"text"')).toBeUndefined();
  });

  it('scans 100,000 levels of nesting without recursion', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(firstDuplicateKey(deep)).toBeUndefined();
  });
});
