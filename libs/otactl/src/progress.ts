import type { Schemas } from './client';

type Deployment = Schemas['Deployment'];
type Summary = Schemas['DeploymentSummary'];

// Typed by the API document, so a status the API drops fails to compile here.
const IN_PROGRESS = ['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot'] as const satisfies ReadonlyArray<keyof Summary['devices_by_status']>;

/** The figures a pipeline waits on, all from one summary (the console's headline counts the same). */
export function figuresOf(summary: Summary) {
  const by = summary.devices_by_status;
  const total = Object.values(by).reduce((sum, count) => sum + count, 0);
  return {
    total,
    confirmed: by.confirmed,
    failed: by.failed + by.rolled_back,
    inProgress: IN_PROGRESS.reduce((sum, status) => sum + by[status], 0),
    notOffered: by.pending,
    confirmedPercent: total === 0 ? 0 : Math.floor((by.confirmed * 1000) / total) / 10,
  };
}

/** One line of a rollout: state, percentage, stage, devices per status, failures by reason. */
export function progressLine(deployment: Deployment, summary: Summary): string {
  const figures = figuresOf(summary);
  const stage = deployment.stage && deployment.stages.length > 0 ? ` · stage ${deployment.stage.index + 1}/${deployment.stages.length}` : '';
  const reasons = summary.failures_by_reason.map((row) => `${row.reason ?? '(none)'} ${row.count}`).join(', ');
  return (
    `build ${deployment.build_number} ${deployment.state} at ${deployment.rollout_percentage}%${stage} · ` +
    `${figures.confirmed} of ${figures.total} updated (${figures.confirmedPercent}%) · ${figures.failed} failed · ${figures.inProgress} in progress · ${figures.notOffered} not offered yet` +
    (reasons ? ` · failures: ${reasons}` : '')
  );
}
