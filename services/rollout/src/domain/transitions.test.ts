import { isDomainError } from '@ota/errors';
import type { Deployment, DeploymentState } from './model';
import { testDeployment } from '../../test/deployment-fixtures';
import { applyTransition, guardrailPauseOf, stageAdvanceOf } from './transitions';

const base = (state: DeploymentState, targeted = true): Deployment =>
  testDeployment({ state, targetChannelIds: targeted ? ['c'] : [], rolloutPercentage: 10, startedAt: null, stage: { index: 0, enteredAt: null } });

const request = (action: string, extra: Partial<{ rolloutPercentage: number; confirmAll: boolean; projectDeviceCount: number }> = {}) => ({
  action,
  confirmAll: false,
  projectDeviceCount: 5,
  ...extra,
});

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isDomainError(error)) return error.kind;
    throw error;
  }
  return 'allowed';
}

describe('deployment transitions (docs/api.md, "Deployment states")', () => {
  const table: Array<[string, DeploymentState, DeploymentState | 'refused']> = [
    ['start', 'draft', 'active'],
    ['pause', 'active', 'paused'],
    ['resume', 'paused', 'active'],
    ['complete', 'active', 'completed'],
    ['complete', 'paused', 'completed'],
    ['cancel', 'draft', 'cancelled'],
    ['cancel', 'paused', 'cancelled'],
    ['start', 'active', 'refused'],
    ['pause', 'paused', 'refused'],
    ['resume', 'active', 'refused'],
    ['complete', 'draft', 'refused'],
    ['cancel', 'completed', 'refused'],
    ['cancel', 'cancelled', 'refused'],
  ];
  it.each(table)('%s from %s gives %s', (action, from, to) => {
    if (to === 'refused') expect(refusal(() => applyTransition(base(from), request(action), new Date()))).toBe('InvalidArgument');
    else expect(applyTransition(base(from), request(action), new Date()).state).toBe(to);
  });

  it('sets started_at on start', () => {
    const now = new Date(42);
    expect(applyTransition(base('draft'), request('start'), now).startedAt).toEqual(now);
  });

  it('ramps up and down, and needs a valid percentage', () => {
    expect(applyTransition(base('active'), request('ramp', { rolloutPercentage: 100 }), new Date())).toMatchObject({ state: 'active', rolloutPercentage: 100 });
    expect(applyTransition(base('paused'), request('ramp', { rolloutPercentage: 0 }), new Date())).toMatchObject({ state: 'paused', rolloutPercentage: 0 });
    expect(refusal(() => applyTransition(base('active'), request('ramp'), new Date()))).toBe('InvalidArgument');
    expect(refusal(() => applyTransition(base('active'), request('ramp', { rolloutPercentage: 101 }), new Date()))).toBe('InvalidArgument');
    expect(refusal(() => applyTransition(base('draft'), request('ramp', { rolloutPercentage: 50 }), new Date()))).toBe('InvalidArgument');
  });

  it('needs confirm_all to start or resume a deployment without targets in a project of two or more devices', () => {
    expect(refusal(() => applyTransition(base('draft', false), request('start'), new Date()))).toBe('InvalidArgument');
    expect(refusal(() => applyTransition(base('paused', false), request('resume'), new Date()))).toBe('InvalidArgument');
    expect(applyTransition(base('draft', false), request('start', { confirmAll: true }), new Date()).state).toBe('active');
    expect(applyTransition(base('draft', false), request('start', { projectDeviceCount: 1 }), new Date()).state).toBe('active');
    expect(refusal(() => applyTransition(base('draft', false), request('start', { projectDeviceCount: 0, confirmAll: true }), new Date()))).toBe(
      'FailedPrecondition',
    );
  });

  it('refuses an unknown action', () => {
    expect(refusal(() => applyTransition(base('draft'), request('explode'), new Date()))).toBe('InvalidArgument');
  });
});

describe('staged plans and guardrail pauses', () => {
  const stages = [
    { percentage: 5, minWaitSeconds: 60, approvalRequired: false },
    { percentage: 50, minWaitSeconds: 60, approvalRequired: false },
    { percentage: 100, minWaitSeconds: 0, approvalRequired: true },
  ];
  const now = new Date(100_000);
  const trip = { guardrail: 'reason_limit' as const, detail: '3 failures', figures: { failures: 3 } };

  test('start begins at the first stage, whatever percentage the draft held', () => {
    const change = applyTransition(base('draft'), request('start'), now);
    expect(change).toMatchObject({ state: 'active', startedAt: now, stage: { index: 0, enteredAt: now } });
    expect(applyTransition({ ...base('draft'), stages }, request('start'), now).rolloutPercentage).toBe(5);
  });

  test('a guardrail pauses only an active deployment, and a resume clears why and restarts the stage wait', () => {
    const paused = guardrailPauseOf(base('active'), trip, now);
    expect(paused).toMatchObject({ state: 'paused', guardrailPause: { ...trip, at: now } });
    expect(guardrailPauseOf(base('paused'), trip, now)).toBeNull();
    const guardrailPaused = { ...base('paused'), stages, stage: { index: 1, enteredAt: new Date(0) }, guardrailPause: { ...trip, at: now } };
    // Its resume states the percentage it resumes at: left out is 400, another one 409 (Aborted).
    expect(refusal(() => applyTransition(guardrailPaused, request('resume'), now))).toBe('InvalidArgument');
    expect(refusal(() => applyTransition(guardrailPaused, request('resume', { rolloutPercentage: 50 }), now))).toBe('Aborted');
    const resumed = applyTransition(guardrailPaused, request('resume', { rolloutPercentage: 10 }), now);
    // From the resume on, the guardrails judge what happens after it, not the figures that tripped.
    expect(resumed).toMatchObject({ state: 'active', guardrailPause: null, guardrailsJudgedSince: now, stage: { index: 1, enteredAt: now } });
    expect(applyTransition(base('paused'), request('resume'), now).guardrailsJudgedSince).toBeNull();
  });

  test('the plan ramps forward only, and never below a percentage a person ramped to', () => {
    const active = { ...base('active'), stages, rolloutPercentage: 5 };
    expect(stageAdvanceOf(active, 1, now)).toMatchObject({ rolloutPercentage: 50, stage: { index: 1, enteredAt: now } });
    expect(stageAdvanceOf({ ...active, rolloutPercentage: 70 }, 1, now)!.rolloutPercentage).toBe(70);
    expect(stageAdvanceOf({ ...active, stage: { index: 1, enteredAt: now } }, 1, now)).toBeNull();
    expect(stageAdvanceOf({ ...active, state: 'paused' }, 1, now)).toBeNull();
  });

  test("a person's ramp moves a staged deployment to the stage its percentage reaches", () => {
    const change = applyTransition({ ...base('active'), stages }, request('ramp', { rolloutPercentage: 60 }), now);
    expect(change).toMatchObject({ rolloutPercentage: 60, stage: { index: 1, enteredAt: now } });
  });
});
