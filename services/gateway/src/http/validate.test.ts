import { ValidationFailed } from './errors';
import { parseQuery } from './validate';

// Query values arrive as text; a parameter typed `integer` in the document is read as a number.
const query = { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 1000 }, q: { type: 'string' } } } as const;

test('an integer parameter written as one is read as a number; text stays text', () => {
  expect(parseQuery(query, { limit: '25', q: '25' })).toEqual({ limit: 25, q: '25' });
  expect(parseQuery(query, {})).toEqual({});
});

test('an integer parameter written any other way is refused, not read loosely', () => {
  for (const limit of ['0', '007', '1.5', '1e3', '-1', ' 3', '', '1001', '9999999999999999', ['1', '2']]) {
    expect(() => parseQuery(query, { limit })).toThrow(ValidationFailed);
  }
});
