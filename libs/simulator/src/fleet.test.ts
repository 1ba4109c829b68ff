import { assignBehaviours, assignChipRevisions } from './fleet';

const ids = Array.from({ length: 1000 }, (_, i) => `d-${i}`);

describe('assignBehaviours', () => {
  it('gives each behaviour exactly its share', () => {
    const behaviours = assignBehaviours(ids, { fail: 0.05, rollBack: 0.02, signatureInvalid: 0.01, silent: 0.03 }, 'seed');
    const count = (behaviour: string) => [...behaviours.values()].filter((value) => value === behaviour).length;
    expect([count('fail'), count('roll_back'), count('signature_invalid'), count('go_silent'), count('succeed')]).toEqual([50, 20, 10, 30, 890]);
  });

  it('is the same for the same seed and differs for another', () => {
    const shares = { fail: 0.1, rollBack: 0, signatureInvalid: 0, silent: 0 };
    const failing = (seed: string) => [...assignBehaviours(ids, shares, seed)].filter(([, b]) => b === 'fail').map(([id]) => id);
    expect(failing('a')).toEqual(failing('a'));
    expect(failing('a')).not.toEqual(failing('b'));
  });

  it('refuses shares that add up to more than the fleet', () => {
    expect(() => assignBehaviours(ids, { fail: 0.6, rollBack: 0.5, signatureInvalid: 0, silent: 0 }, 's')).toThrow(/more than the fleet/);
  });
});

describe('assignChipRevisions', () => {
  it('spreads the revisions in equal shares, by the seed', () => {
    const revisions = assignChipRevisions(ids.slice(0, 10), [3, 101, 4], 'seed');
    const count = (revision: number) => [...revisions.values()].filter((value) => value === revision).length;
    expect([count(3), count(101), count(4)]).toEqual([4, 3, 3]);
    expect(assignChipRevisions(ids, [3, 101], 'a')).toEqual(assignChipRevisions(ids, [3, 101], 'a'));
    expect(assignChipRevisions(ids, [3, 101], 'a')).not.toEqual(assignChipRevisions(ids, [3, 101], 'b'));
  });

  it('reports none without revisions', () => {
    expect(assignChipRevisions(ids, [], 'seed').size).toBe(0);
  });
});
