// Test data of the rollout domain's unit tests (src/domain/*.test.ts); kept out of the shipped source.
import { NO_GUARDRAILS } from '../src/domain/guardrails';
import type { ArtifactSummary } from '@ota/decision';
import type { Deployment } from '../src/domain/model';

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
    guardrailsJudgedSince: null,
    maintenance: null,
    caps: null,
    ...overrides,
  };
}

/** The artifact of testDeployment: build 5 for esp_idf on esp32, no other dimension declared. */
export function testArtifact(overrides: Partial<ArtifactSummary> = {}): ArtifactSummary {
  return {
  id: 'artifact-1',
  projectId: 'p',
  buildNumber: 5,
  versionLabel: '1.5.0',
  framework: 'esp_idf',
  chipFamily: 'esp32',
  boardId: '',
  hardwareRevision: '',
  partitionProfile: '',
  minNvsSchemaVersion: null,
  securityMode: '',
  checksumSha256: 'c',
  fileSize: 10,
  archived: false,
  signature: '',
  signingKeyId: '',
  storageKey: '',
  image: null,
  ...overrides,
  };
}
