import { testDeployment } from '../../test/deployment-fixtures';
import { holdsOnBuild } from './build-holds';

const trip = { guardrail: 'failure_threshold', detail: '3 of 5 finished devices failed', figures: {}, at: new Date(0) };
const gated = [
  { percentage: 10, minWaitSeconds: 0, approvalRequired: false },
  { percentage: 50, minWaitSeconds: 0, approvalRequired: true },
];

describe('holds on a build (docs/api.md, "Holds on a build")', () => {
  it('is held by a guardrail pause and by a gate still ahead, in another deployment of the same build only', () => {
    const deployments = [
      testDeployment({ id: 'paused', artifactId: 'a', state: 'paused', guardrailPause: trip }),
      testDeployment({ id: 'gate', artifactId: 'a', state: 'active', stages: gated, stage: { index: 0, enteredAt: null }, rolloutPercentage: 10 }),
      testDeployment({ id: 'other-build', artifactId: 'b', state: 'paused', guardrailPause: trip }),
    ];
    expect(holdsOnBuild(deployments, 'a', 'moving')).toEqual([
      { deploymentId: 'paused', kind: 'guardrail_pause', detail: 'deployment paused was paused by its failure_threshold guardrail: 3 of 5 finished devices failed' },
      { deploymentId: 'gate', kind: 'approval_gate', detail: 'deployment gate waits for approval before 50% (it is at 10%)' },
    ]);
    expect(holdsOnBuild(deployments, 'a', 'paused').map((hold) => hold.deploymentId)).toEqual(['gate']);
  });

  it('is not held by a gate passed, a person\'s pause, a draft or a finished deployment', () => {
    const deployments = [
      testDeployment({ id: 'passed', artifactId: 'a', state: 'active', stages: gated, stage: { index: 1, enteredAt: null } }),
      testDeployment({ id: 'by-hand', artifactId: 'a', state: 'paused', guardrailPause: null }),
      testDeployment({ id: 'draft', artifactId: 'a', state: 'draft', stages: gated }),
      testDeployment({ id: 'cancelled', artifactId: 'a', state: 'cancelled', stages: gated, guardrailPause: trip }),
    ];
    expect(holdsOnBuild(deployments, 'a', 'moving')).toEqual([]);
  });
});
