import { assignBehaviours } from './fleet';

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
