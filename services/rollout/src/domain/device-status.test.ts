import { bitOf, rankOf, ROLLOUT_STATUSES, statusOfBits } from './device-status';

describe('status bits', () => {
  it('give each status its own bit, ordered by rank', () => {
    const bits = ROLLOUT_STATUSES.map(bitOf);
    expect(new Set(bits).size).toBe(ROLLOUT_STATUSES.length);
    for (const status of ROLLOUT_STATUSES) expect(statusOfBits(bitOf(status))).toBe(status);
  });

  it('read back the highest status a device reached, whatever it skipped', () => {
    const reached = (...statuses: string[]) => statusOfBits(statuses.reduce((sum, status) => sum + bitOf(status), 0));
    expect(reached('offered', 'download_started', 'downloaded')).toBe('downloaded');
    expect(reached('offered', 'confirmed')).toBe('confirmed');
    expect(reached('offered', 'flashed', 'failed')).toBe('failed');
    expect(reached('offered', 'failed', 'rolled_back', 'confirmed')).toBe('confirmed');
    expect(rankOf(reached('offered', 'rolled_back')!)).toBeGreaterThan(rankOf('failed'));
    expect(statusOfBits(0)).toBeUndefined();
  });
});
