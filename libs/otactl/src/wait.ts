import { seconds, UsageError } from './args';
import { ApiRefusal, ok, type Api, type Schemas } from './client';
import { EXIT } from './exit-codes';
import type { Output } from './output';
import { figuresOf, progressLine } from './progress';

type Deployment = Schemas['Deployment'];
type Summary = Schemas['DeploymentSummary'];

/** What `wait` waits for. */
export type Until = { kind: 'completed' } | { kind: 'stage'; stage: number } | { kind: 'confirmed'; percent: number };

export function parseUntil(text: string): Until {
  if (text === 'completed') return { kind: 'completed' };
  const stage = /^stage:(\d+)$/.exec(text);
  if (stage && Number(stage[1]) >= 1) return { kind: 'stage', stage: Number(stage[1]) };
  const confirmed = /^confirmed:(\d+(?:\.\d+)?)%$/.exec(text);
  if (confirmed && Number(confirmed[1]) > 0 && Number(confirmed[1]) <= 100) return { kind: 'confirmed', percent: Number(confirmed[1]) };
  throw new UsageError(`--until must be completed, stage:N (N from 1) or confirmed:N% (N above 0, at most 100), not "${text}"`);
}

function untilText(until: Until): string {
  return until.kind === 'completed' ? 'completed' : until.kind === 'stage' ? `stage ${until.stage}` : `${until.percent}% of targeted devices confirmed`;
}

function met(until: Until, deployment: Deployment, summary: Summary): boolean {
  if (until.kind === 'completed') return deployment.state === 'completed';
  if (until.kind === 'stage') return deployment.state !== 'draft' && deployment.stage !== null && deployment.stage.index + 1 >= until.stage;
  return figuresOf(summary).confirmedPercent >= until.percent;
}

/** Answers a later poll may not get: a gateway busy, rate limiting, restarting or behind a proxy that lost it. */
const TRANSIENT_STATUSES = new Set([408, 429, 502, 503, 504]);

/** A poll that failed for a moment: retried within the timeout, never the pipeline's failure. */
function transientProblem(error: unknown): string | undefined {
  if (error instanceof ApiRefusal) return TRANSIENT_STATUSES.has(error.status) ? `${error.status} ${error.message}` : undefined;
  // fetch's own failures: a refused or reset connection, a name that did not resolve, our deadline.
  const name = (error as Error | undefined)?.name;
  if (error instanceof TypeError || name === 'AbortError' || name === 'TimeoutError') {
    const cause = (error as { cause?: Error }).cause;
    return cause?.message ?? (error as Error).message;
  }
  return undefined;
}

export interface FollowOptions {
  projectId: string;
  deploymentId: string;
  until: Until;
  timeoutSeconds: number;
  intervalSeconds: number;
  consoleUrl: string;
}

/**
 * Follows a deployment until the condition holds (0), it pauses (2), the timeout passes (3), or it
 * ends without the condition (1), drawing its progress on the way. A poll that fails for a moment
 * (429, 502, 503, 504, a refused or broken connection) is tried again after the interval or the
 * answer's Retry-After; every call carries the deadline, so `--timeout` is a hard limit even
 * against a gateway that stops answering.
 */
export async function follow(api: Api, out: Output, options: FollowOptions): Promise<number> {
  const giveUpAt = Date.now() + options.timeoutSeconds * 1000;
  const path = { id: options.projectId, did: options.deploymentId };
  const link = `${options.consoleUrl}/console/projects/${options.projectId}/deployments/${options.deploymentId}`;
  out.note(`waiting until ${untilText(options.until)} (timeout ${options.timeoutSeconds} s): ${link}`);
  let last: { deployment: Deployment; summary: Summary } | undefined;
  const timedOut = (why: string) => {
    out.endProgress();
    const progress = last ? progressLine(last.deployment, last.summary) : 'no answer yet';
    out.result({ result: 'timed_out', ...(last ?? {}), console_url: link }, `timed out after ${options.timeoutSeconds} s before ${untilText(options.until)}${why}\n${progress}\nconsole: ${link}`);
    return EXIT.timedOut;
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, Math.max(0, giveUpAt - Date.now()))));
  for (;;) {
    const signal = AbortSignal.timeout(Math.max(1, giveUpAt - Date.now()));
    let deployment: Deployment;
    let summary: Summary;
    try {
      [deployment, summary] = await Promise.all([
        ok(api.GET('/api/v1/projects/{id}/deployments/{did}/', { params: { path }, signal })),
        ok(api.GET('/api/v1/projects/{id}/deployments/{did}/summary/', { params: { path }, signal })),
      ]);
    } catch (error) {
      const problem = transientProblem(error);
      if (problem === undefined) throw error;
      if (Date.now() >= giveUpAt) return timedOut(` (last: ${problem})`);
      out.note(`not answered (${problem}); trying again`);
      const retryAfter = error instanceof ApiRefusal && error.retryAfterSeconds ? error.retryAfterSeconds * 1000 : 0;
      await pause(Math.max(options.intervalSeconds * 1000, retryAfter));
      if (Date.now() >= giveUpAt) return timedOut(` (last: ${problem})`);
      continue;
    }
    last = { deployment, summary };
    out.progress(progressLine(deployment, summary));
    const result = { deployment, summary, console_url: link };
    if (met(options.until, deployment, summary)) {
      out.endProgress();
      out.result({ result: 'met', until: untilText(options.until), ...result }, `met: ${untilText(options.until)} · ${progressLine(deployment, summary)}`);
      return EXIT.ok;
    }
    if (deployment.state === 'paused') {
      out.endProgress();
      const pause = deployment.guardrail_pause;
      const why = pause
        ? `paused by the ${pause.guardrail === 'reason_limit' ? 'reason limit' : 'failure threshold'}: ${pause.detail} (${Object.entries(pause.figures)
            .map(([name, value]) => `${name} ${value}`)
            .join(', ')})`
        : 'paused by a person';
      out.result({ result: 'paused', reason: why, ...result }, `${why}\n${progressLine(deployment, summary)}\nconsole: ${link}`);
      return EXIT.paused;
    }
    if (deployment.state === 'cancelled' || deployment.state === 'completed') {
      out.endProgress();
      out.result({ result: deployment.state, ...result }, `the deployment was ${deployment.state} before ${untilText(options.until)}\nconsole: ${link}`);
      return EXIT.other;
    }
    if (Date.now() >= giveUpAt) return timedOut('');
    await pause(options.intervalSeconds * 1000);
  }
}

/** The `wait` flags, shared with `release --wait`. */
export const WAIT_FLAGS = {
  until: { type: 'string', default: 'completed' },
  timeout: { type: 'string', default: '1h' },
  interval: { type: 'string', default: '5s' },
} as const;

export function waitSettings(values: { until?: string; timeout?: string; interval?: string }) {
  return {
    until: parseUntil(values.until ?? 'completed'),
    timeoutSeconds: seconds(values.timeout ?? '1h', '--timeout'),
    intervalSeconds: Math.max(1, seconds(values.interval ?? '5s', '--interval')),
  };
}
