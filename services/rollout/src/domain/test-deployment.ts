import { NO_GUARDRAILS } from './guardrails';
import type { Deployment } from './model';

/** A deployment for unit tests: active, build 5, on channel `stable`, at 100%, no guardrails or stages. */
export function testDeployment(overrides: Partial<Deployment> = {}): Deployment {
  return {
    id: 'deployment-1',
    projectId: 'p',
    artifactId: 'artifact-1',
    buildNumber: 5,
    versionLabel: '1.5.0',
    state: 'active',
    targetGroupIds: [],
    targetChannelIds: ['stable'],
    rolloutPercentage: 100,
    rolloutStrategy: 'immediate',
    notes: '',
    failureCount: 0,
    createdAt: new Date(1_000),
    startedAt: new Date(2_000),
    updatedAt: new Date(2_000),
    version: 1,
    guardrails: NO_GUARDRAILS,
    stages: [],
    stage: { index: 0, enteredAt: new Date(2_000) },
    guardrailPause: null,
    ...overrides,
  };
}
