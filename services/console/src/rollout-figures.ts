import { ROLLOUT_STATUSES, type DeploymentSummary, type RolloutStatus } from './types';

const IN_PROGRESS: RolloutStatus[] = ['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot'];

/** The rollout's numbers, all from one summary, so that the headline, the bar and the table agree. */
export function rolloutFigures(summary: DeploymentSummary) {
  const by = summary.devices_by_status;
  const total = ROLLOUT_STATUSES.reduce((sum, status) => sum + by[status], 0);
  const failedDevices = by.failed + by.rolled_back;
  return {
    total,
    confirmed: by.confirmed,
    failedDevices,
    inProgress: IN_PROGRESS.reduce((sum, status) => sum + by[status], 0),
    notOffered: by.pending,
    percentUpdated: total === 0 ? 0 : Math.round((by.confirmed * 1000) / total) / 10,
  };
}
