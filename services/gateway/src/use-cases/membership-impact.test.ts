import type { rollout } from '@ota/proto';
import { membershipImpact } from './membership-impact';

const deployment = (fields: Partial<rollout.Deployment>) => ({ id: 'd', state: 'active', targetGroupIds: [], targetChannelIds: [], ...fields }) as rollout.Deployment;
const device = (id: string, groupIds: string[], channelId = 'stable', currentBuildNumber = 0) => ({ id, groupIds, channelId, currentBuildNumber });

test('each active or paused deployment that targets the group gains and loses the devices whose targeting changes', () => {
  const devices = [device('new-1', []), device('new-2', ['other']), device('new-3', [], 'beta'), device('old-1', ['g']), device('old-2', ['g', 'other'])];
  const impact = membershipImpact(
    [
      deployment({ id: 'canary', targetGroupIds: ['g'] }),
      deployment({ id: 'both', state: 'paused', targetGroupIds: ['g', 'other'] }),
      deployment({ id: 'stable-only', targetGroupIds: ['g'], targetChannelIds: ['stable'] }),
      deployment({ id: 'draft', state: 'draft', targetGroupIds: ['g'] }),
      deployment({ id: 'elsewhere', targetGroupIds: ['other'] }),
    ],
    devices,
    { groupId: 'g', add: ['new-1', 'new-2', 'new-3', 'old-1'], remove: ['old-2'] },
  );
  expect(impact.map(({ deployment: d, gains, loses }) => [d.id, gains, loses])).toEqual([
    ['canary', 3, 1],
    // new-2 and old-2 are in `other` too: only new-1 and new-3 change.
    ['both', 2, 0],
    // new-3 is on beta, which the deployment leaves out.
    ['stable-only', 2, 1],
  ]);
});

test("a gained device already on the deployment's build or a later one is no device it could offer it to", () => {
  const devices = [device('behind', []), device('on-it', [], 'stable', 5), device('ahead', [], 'stable', 7)];
  const [impact] = membershipImpact([deployment({ id: 'canary', targetGroupIds: ['g'], buildNumber: 5 })], devices, { groupId: 'g', add: ['behind', 'on-it', 'ahead'], remove: [] });
  expect(impact).toMatchObject({ gains: 3, gainsOnEarlierBuilds: 1, loses: 0 });
});
