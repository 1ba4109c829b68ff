import { randomUUID } from 'node:crypto';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { testStack } from '@ota/testkit';
import type { Connection } from 'mongoose';
import { registerRolloutModels, type RolloutModels } from '../src/adapters/mongo/models';
import { MongoDeploymentStore } from '../src/adapters/mongo/mongo-deployment-store';
import type { Deployment } from '../src/domain/model';
import { testDeployment } from './deployment-fixtures';

// Rollout's deployment store alone, against the run's real MongoDB-protocol server (FerretDB
// here), in a database of its own: a deployment comes back as it was stored, guardrails and stages
// included; of racing transitions from one version exactly one is applied; a transition whose
// claimer stopped before applying it is applied by the next one to try.

let mongo: Connection;
let models: RolloutModels;
let store: MongoDeploymentStore;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, seconds));

function stored(overrides: Partial<Deployment> = {}): Deployment {
  return testDeployment({
    id: randomUUID(),
    projectId: randomUUID(),
    createdAt: at(0),
    startedAt: null,
    updatedAt: at(0),
    state: 'draft',
    stage: { index: 0, enteredAt: null },
    ...overrides,
  });
}

beforeAll(async () => {
  mongo = await connectMongo({ uri: testStack().mongodbUri, database: `ota_test_rollout_${randomUUID().slice(0, 8)}` });
  models = registerRolloutModels(mongo);
  await ensureIndexes(mongo);
  store = new MongoDeploymentStore(models);
});

afterAll(async () => {
  await mongo.dropDatabase();
  await mongo.close();
});

it('gives a deployment back as stored, with its guardrails and stages, and lists only the active ones as active', async () => {
  const deployment = stored({
    guardrails: {
      failureThreshold: { percent: 20, minFinished: 5 },
      reasonLimits: [{ reason: 'signature_invalid', count: 3, windowSeconds: 600 }],
      confirmTimeoutSeconds: 900,
      healthRegression: { marginPercent: 80, significance: 0.01, minDevices: 30, minDeviceHours: 100 },
    },
    caps: { offersPerMinute: 120, maxInProgress: null },
    stages: [
      { percentage: 10, minWaitSeconds: 60, approvalRequired: false },
      { percentage: 100, minWaitSeconds: 0, approvalRequired: true },
    ],
    rolloutPercentage: 10,
  });
  await store.insertDeployment(deployment);
  expect(await store.findDeployment(deployment.id)).toEqual(deployment);
  expect(await store.listDeployments(deployment.projectId)).toEqual([deployment]);
  expect((await store.listActiveDeployments()).some((active) => active.id === deployment.id)).toBe(false);
  expect(await store.countDeployments(deployment.projectId, ['draft'])).toBe(1);
  expect(await store.countDeployments(deployment.projectId, ['active', 'paused'], deployment.artifactId)).toBe(0);
});

it('applies exactly one of several transitions racing from the same version', async () => {
  const deployment = stored();
  await store.insertDeployment(deployment);
  const start = { state: 'active' as const, rolloutPercentage: 100, startedAt: at(1), updatedAt: at(1), stage: { index: 0, enteredAt: at(1) }, guardrailPause: null, guardrailsJudgedSince: null };
  const results = await Promise.all(Array.from({ length: 6 }, (_, index) => store.applyTransition(deployment.id, 1, { ...start, rolloutPercentage: 10 + index })));
  const applied = results.filter((result): result is Deployment => result !== null);
  expect(applied).toHaveLength(1);
  const now = await store.findDeployment(deployment.id);
  expect(now).toMatchObject({ state: 'active', version: 2, rolloutPercentage: applied[0]!.rolloutPercentage, startedAt: at(1) });
  expect((await store.listActiveDeployments()).some((active) => active.id === deployment.id)).toBe(true);
  // From the old version again: refused, the deployment unchanged.
  expect(await store.applyTransition(deployment.id, 1, { ...start, state: 'paused' })).toBeNull();
  expect((await store.findDeployment(deployment.id))?.state).toBe('active');
});

it('applies a transition whose claimer stopped between claiming and applying it, when the next one tries', async () => {
  const deployment = stored({ state: 'active', startedAt: at(1), stage: { index: 0, enteredAt: at(1) } });
  await store.insertDeployment(deployment);
  // The claim of version 2 is stored, as a claimer that stopped before its update would leave it.
  await models.Transition.collection.insertOne({
    _id: `${deployment.id}:2`,
    deployment_id: deployment.id,
    version: 2,
    set: { state: 'paused', rollout_percentage: 100, started_at: at(1), updated_at: at(2), stage_index: 0, stage_entered_at: at(1), guardrail_pause: null, guardrails_judged_since: null },
  } as never);
  expect((await store.findDeployment(deployment.id))?.state).toBe('active');
  // The next transition from version 1 loses to that claim, and brings the deployment up to it.
  expect(await store.applyTransition(deployment.id, 1, { state: 'completed', rolloutPercentage: 100, startedAt: at(1), updatedAt: at(3), stage: { index: 0, enteredAt: at(1) }, guardrailPause: null, guardrailsJudgedSince: null })).toBeNull();
  expect(await store.findDeployment(deployment.id)).toMatchObject({ state: 'paused', version: 2, updatedAt: at(2) });
});
