import { isDomainError } from '@ota/errors';
import { dueStage, nextStage, stageOfPercentage, validStages, type Stage } from './stages';

const plan: Stage[] = [
  { percentage: 5, minWaitSeconds: 60, approvalRequired: false },
  { percentage: 25, minWaitSeconds: 120, approvalRequired: false },
  { percentage: 100, minWaitSeconds: 0, approvalRequired: true },
];
const at = (seconds: number) => new Date(seconds * 1000);

test('a stage is due once its wait is over, and the last stage has no next', () => {
  expect(dueStage(plan, { index: 0, enteredAt: at(0) }, at(59))).toBeNull();
  expect(dueStage(plan, { index: 0, enteredAt: at(0) }, at(60))).toBe(1);
  expect(nextStage(plan, { index: 0, enteredAt: at(0) })).toEqual({ index: 1, dueAt: at(60), approvalRequired: false });
  expect(nextStage(plan, { index: 2, enteredAt: at(0) })).toBeNull();
  // Before the start there is no wait running.
  expect(nextStage(plan, { index: 0, enteredAt: null })).toBeNull();
});

test('a stage that needs approval is never ramped into by the plan', () => {
  expect(nextStage(plan, { index: 1, enteredAt: at(0) })).toEqual({ index: 2, dueAt: at(120), approvalRequired: true });
  expect(dueStage(plan, { index: 1, enteredAt: at(0) }, at(10_000))).toBeNull();
});

test("a person's ramp lands in the last stage its percentage reaches", () => {
  expect(stageOfPercentage(plan, 3)).toBe(0);
  expect(stageOfPercentage(plan, 25)).toBe(1);
  expect(stageOfPercentage(plan, 60)).toBe(1);
  expect(stageOfPercentage(plan, 100)).toBe(2);
});

test('stages must rise strictly and stay within bounds', () => {
  const refusal = (stages: Stage[]) => {
    try {
      validStages(stages);
      return 'accepted';
    } catch (error) {
      if (isDomainError(error, 'InvalidArgument')) return error.message;
      throw error;
    }
  };
  expect(refusal(plan)).toBe('accepted');
  expect(refusal([plan[1]!, plan[0]!])).toBe('stages[1].percentage must be above the stage before it');
  expect(refusal([{ ...plan[0]!, percentage: 0 }])).toMatch(/^stages\[0\].percentage/);
  expect(refusal([{ ...plan[0]!, minWaitSeconds: -1 }])).toMatch(/^stages\[0\].min_wait_seconds/);
});
