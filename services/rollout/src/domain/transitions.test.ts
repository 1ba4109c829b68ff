import { isDomainError } from '@ota/errors';
import type { Deployment, DeploymentState } from './model';
import { applyTransition } from './transitions';

const base = (state: DeploymentState, targeted = true): Deployment => ({
  id: 'd',
  projectId: 'p',
  artifactId: 'a',
  buildNumber: 1,
  versionLabel: '1',
  state,
  targetGroupIds: [],
  targetChannelIds: targeted ? ['c'] : [],
  rolloutPercentage: 10,
  rolloutStrategy: 'immediate',
  notes: '',
  failureCount: 0,
  createdAt: new Date(0),
  startedAt: null,
  updatedAt: new Date(0),
  version: 1,
});

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

describe('deployment transitions (decisions.md section 4)', () => {
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
