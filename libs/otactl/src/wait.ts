import { seconds, UsageError } from './args';
import { ok, type Api, type Schemas } from './client';
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
 * ends without the condition (1), drawing its progress on the way.
 */
export async function follow(api: Api, out: Output, options: FollowOptions): Promise<number> {
  const giveUpAt = Date.now() + options.timeoutSeconds * 1000;
  const path = { id: options.projectId, did: options.deploymentId };
  const link = `${options.consoleUrl}/console/projects/${options.projectId}/deployments/${options.deploymentId}`;
  out.note(`waiting until ${untilText(options.until)} (timeout ${options.timeoutSeconds} s): ${link}`);
  for (;;) {
    const [deployment, summary] = await Promise.all([
      ok(api.GET('/api/v1/projects/{id}/deployments/{did}/', { params: { path } })),
      ok(api.GET('/api/v1/projects/{id}/deployments/{did}/summary/', { params: { path } })),
    ]);
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
    if (Date.now() >= giveUpAt) {
      out.endProgress();
      out.result({ result: 'timed_out', ...result }, `timed out after ${options.timeoutSeconds} s before ${untilText(options.until)}\n${progressLine(deployment, summary)}\nconsole: ${link}`);
      return EXIT.timedOut;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalSeconds * 1000, Math.max(0, giveUpAt - Date.now()))));
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
