import { checkStateOf } from './check-state';
import type { Deployment } from './model';
import { testDeployment } from '../../test/deployment-fixtures';

const startedAt = new Date('2026-11-01T12:00:00Z');
const deployment = (targets: Partial<Pick<Deployment, 'targetGroupIds' | 'targetChannelIds'>>): Deployment =>
  testDeployment({ targetChannelIds: [], createdAt: new Date('2026-11-01T11:00:00Z'), startedAt, updatedAt: startedAt, version: 2, ...targets });
const device = (lastCheckAt: Date | undefined, extra: { channelId?: string; groupIds?: string[]; lastSeen?: Date } = {}) => ({
  channelId: extra.channelId ?? 'stable',
  groupIds: extra.groupIds ?? [],
  lastSeen: extra.lastSeen ?? lastCheckAt,
  lastCheckAt,
});
const before = new Date('2026-11-01T11:59:00Z');
const after = new Date('2026-11-01T12:01:00Z');

describe('check_state (docs/api.md, "Device")', () => {
  it('is never_seen without a heartbeat or a check', () => {
    expect(checkStateOf(device(undefined), [deployment({})])).toBe('never_seen');
  });

  it('is waiting_for_next_check when a targeting deployment started after the last check', () => {
    expect(checkStateOf(device(before), [deployment({})])).toBe('waiting_for_next_check');
    expect(checkStateOf(device(undefined, { lastSeen: before }), [deployment({})])).toBe('waiting_for_next_check');
    expect(checkStateOf(device(before, { groupIds: ['canary'] }), [deployment({ targetGroupIds: ['canary'] })])).toBe('waiting_for_next_check');
  });

  it('is no_pending_check once checked since, or when no active deployment targets the device', () => {
    expect(checkStateOf(device(after), [deployment({})])).toBe('no_pending_check');
    expect(checkStateOf(device(before), [])).toBe('no_pending_check');
    expect(checkStateOf(device(before, { channelId: 'beta' }), [deployment({ targetChannelIds: ['stable'] })])).toBe('no_pending_check');
    // Both lists set: a group and a channel must both match.
    expect(checkStateOf(device(before, { groupIds: ['canary'], channelId: 'beta' }), [deployment({ targetGroupIds: ['canary'], targetChannelIds: ['stable'] })])).toBe('no_pending_check');
  });
});
