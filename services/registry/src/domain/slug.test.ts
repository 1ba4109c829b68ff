import { slugCandidate, slugify } from './slug';

describe('project slugs', () => {
  it.each([
    ['Greenhouse Sensors', 'greenhouse-sensors'],
    ['  Café  Ünits ', 'cafe-units'],
    ['***', 'project'],
    ['a/b\\c', 'a-b-c'],
  ])('slugify(%j) is %j', (name, slug) => expect(slugify(name)).toBe(slug));

  it('numbers later candidates', () => {
    expect([1, 2, 3].map((attempt) => slugCandidate('x', attempt))).toEqual(['x', 'x-2', 'x-3']);
  });
});
