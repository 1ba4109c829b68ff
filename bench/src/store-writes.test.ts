import { writesBetween } from './seed-fleet';

describe('store writes', () => {
  it('is what each counter grew by between two readings, and nothing without both', () => {
    const before = { walMiB: 10, checkpoints: 3, pagesByCheckpoints: 100, pagesByBackgroundWriter: 5, pagesByBackends: 7 };
    const after = { walMiB: 12, checkpoints: 4, pagesByCheckpoints: 160, pagesByBackgroundWriter: 5, pagesByBackends: 9 };
    expect(writesBetween(before, after)).toEqual({ walMiB: 2, checkpoints: 1, pagesByCheckpoints: 60, pagesByBackgroundWriter: 0, pagesByBackends: 2 });
    expect(writesBetween(undefined, after)).toBeUndefined();
  });
});
