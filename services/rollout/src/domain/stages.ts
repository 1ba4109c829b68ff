import { invalidArgument } from '@ota/errors';

/** One step of a staged plan: hold `percentage` for at least `minWaitSeconds` before the next. */
export interface Stage {
  percentage: number;
  minWaitSeconds: number;
  /** The ramp into this stage waits for a person's `ramp` instead of happening by itself. */
  approvalRequired: boolean;
}

/** Where a deployment stands in its plan. */
export interface StageProgress {
  /** The index of the current stage; 0 for a deployment without stages. */
  index: number;
  /** When the current stage began (started, ramped or resumed into); null before the start. */
  enteredAt: Date | null;
}

const MAX_STAGES = 10;
const MAX_WAIT_SECONDS = 30 * 24 * 3600;

/** Checks a plan as a client sent it; stages rise strictly, so ramps by the plan are monotone. */
export function validStages(stages: Stage[]): Stage[] {
  if (stages.length > MAX_STAGES) throw invalidArgument(`stages holds at most ${MAX_STAGES} stages`);
  stages.forEach((stage, index) => {
    const at = `stages[${index}]`;
    if (!Number.isInteger(stage.percentage) || stage.percentage < 1 || stage.percentage > 100) throw invalidArgument(`${at}.percentage must be an integer from 1 to 100`);
    if (index > 0 && stage.percentage <= stages[index - 1]!.percentage) throw invalidArgument(`${at}.percentage must be above the stage before it`);
    if (!Number.isInteger(stage.minWaitSeconds) || stage.minWaitSeconds < 0 || stage.minWaitSeconds > MAX_WAIT_SECONDS) {
      throw invalidArgument(`${at}.min_wait_seconds must be an integer from 0 to ${MAX_WAIT_SECONDS}`);
    }
  });
  return stages;
}

export interface NextStage {
  index: number;
  /** When the current stage's wait ends. */
  dueAt: Date;
  /** The ramp waits for a person once due. */
  approvalRequired: boolean;
}

/** The stage after the current one, while an active deployment has one to go to. */
export function nextStage(stages: readonly Stage[], progress: StageProgress): NextStage | null {
  const current = stages[progress.index];
  const next = stages[progress.index + 1];
  if (!current || !next || !progress.enteredAt) return null;
  return { index: progress.index + 1, dueAt: new Date(progress.enteredAt.getTime() + current.minWaitSeconds * 1000), approvalRequired: next.approvalRequired };
}

/** The stage the plan ramps itself into now, or null (not due, waiting for approval, or the last stage). */
export function dueStage(stages: readonly Stage[], progress: StageProgress, now: Date): number | null {
  const next = nextStage(stages, progress);
  if (!next || next.approvalRequired || now < next.dueAt) return null;
  return next.index;
}

/** The stage a person's ramp to `percentage` lands in: the last one it reaches, or the first. */
export function stageOfPercentage(stages: readonly Stage[], percentage: number): number {
  let index = 0;
  stages.forEach((stage, candidate) => {
    if (stage.percentage <= percentage) index = candidate;
  });
  return index;
}
