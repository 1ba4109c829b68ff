import { RolloutBar } from '../../components/rollout-bar';
import { rolloutFigures } from '../../rollout-figures';
import type { DeploymentSummary } from '../../types';
import { reasonWords } from '../../words';
import { heldWords } from './held-words';

/** The headline, the bar, and the failures by reason of one summary. */
export function Progress({ summary, windowZone }: { summary: DeploymentSummary; windowZone: string | null }) {
  const figures = rolloutFigures(summary);
  // What holds the devices not offered yet: a closed window or full caps, before their next check.
  const held = heldWords(summary.held_now, windowZone);
  return (
    <>
      <p className="headline" data-testid="headline">
        <strong>
          {figures.confirmed} of {figures.total} updated ({figures.percentUpdated}%)
        </strong>
        <span> · {figures.failedDevices} failed or rolled back</span>
        <span> · {figures.inProgress} in progress</span>
        <span>
          {' '}
          · {figures.notOffered} not offered yet{' '}
          <span className="muted" data-testid="not-offered-why">
            {held
              ? `(${held})`
              : summary.rollout_percentage === 100
                ? '(waiting for their next check)'
                : `(outside the ${summary.rollout_percentage}%, or waiting for their next check: the preview tells them apart)`}
          </span>
        </span>
      </p>
      <RolloutBar counts={summary.devices_by_status} />
      <p>
        Failure reports: <strong data-testid="failure-count">{summary.failure_count}</strong>
        {summary.failure_count !== figures.failedDevices && (
          <span className="muted"> (a device that failed, then tried again, is counted for each failure; {figures.failedDevices} devices are failed or rolled back now)</span>
        )}
      </p>
      {summary.deferred_devices > 0 && summary.deferred_until && (
        <p data-testid="deferred">
          <strong>{summary.deferred_devices}</strong> device{summary.deferred_devices === 1 ? '' : 's'} put the update off, the latest until {new Date(summary.deferred_until).toLocaleString()}{' '}
          <span className="muted">(offered again then; a deferral is no failure)</span>
        </p>
      )}
      {summary.failures_by_reason.length > 0 && (
        <table className="compact" data-testid="failures-by-reason">
          <caption>Failures by reason</caption>
          <thead>
            <tr>
              <th scope="col">Reason</th>
              <th scope="col">Failures</th>
            </tr>
          </thead>
          <tbody>
            {summary.failures_by_reason.map((row) => (
              <tr key={row.reason ?? ''}>
                <td>
                  {row.reason ? (
                    <>
                      {reasonWords(row.reason)} <code className="muted">{row.reason}</code>
                    </>
                  ) : (
                    <span className="muted">(none given)</span>
                  )}
                </td>
                <td>{row.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
