import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { answer, api } from '../../api';
import { ErrorNote } from '../../components/feedback';
import { formatBytes, Timestamp } from '../../components/time';
import { queryKeys } from '../../query-keys';
import type { Decision, DeviceEvent } from '../../types';
import { checkStatusWords, reasonWords, statusWords } from '../../words';

type TimelineEntry = { at: string; key: string } & ({ kind: 'report'; report: DeviceEvent } | { kind: 'check'; decision: Decision });

/** The device's reports and its OTA decisions, merged, newest first. */
export function mergeTimeline(reports: DeviceEvent[], decisions: Decision[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    ...reports.map((report) => ({ at: report.created_at, key: `r-${report.id}`, kind: 'report' as const, report })),
    ...decisions.map((decision) => ({ at: decision.created_at, key: `c-${decision.id}`, kind: 'check' as const, decision })),
  ];
  return entries.sort((a, b) => b.at.localeCompare(a.at) || a.key.localeCompare(b.key));
}

/** What the device reported and what its checks were answered, read every 5 seconds. */
export function DeviceTimeline({ projectId, deviceId }: { projectId: string; deviceId: string }) {
  const params = { path: { id: projectId, did: deviceId } };
  const reports = useQuery({ queryKey: queryKeys.deviceEvents(deviceId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/devices/{did}/events/', { params })), refetchInterval: 5_000 });
  const decisions = useQuery({ queryKey: queryKeys.deviceChecks(deviceId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/devices/{did}/check-events/', { params })), refetchInterval: 5_000 });
  const timeline = mergeTimeline(reports.data ?? [], decisions.data ?? []);
  return (
    <section aria-labelledby="timeline">
      <h2 id="timeline">Timeline</h2>
      <p className="muted">What the device reported (its lifecycle events) and what each of its checks was answered, newest first.</p>
      <ErrorNote error={reports.error ?? decisions.error} />
      {timeline.length === 0 && !reports.isLoading && <p className="muted">Nothing yet.</p>}
      <ol className="timeline" data-testid="timeline">
        {timeline.map((entry) => (
          <li key={entry.key} className={entry.kind}>
            <Timestamp at={entry.at} />
            {entry.kind === 'report' ? <ReportLine projectId={projectId} report={entry.report} /> : <CheckLine decision={entry.decision} />}
          </li>
        ))}
      </ol>
    </section>
  );
}

function ReportLine({ projectId, report }: { projectId: string; report: DeviceEvent }) {
  return (
    <span>
      <span className="tag">reported</span> <strong className={`status status-${report.status}`}>{statusWords(report.event)}</strong>
      {report.reason && (
        <span className="reason" title={report.reason}>
          {' '}
          {reasonWords(report.reason)}
        </span>
      )}
      {report.build_number !== null && <span> build {report.build_number}</span>}
      <span className="muted">
        {' '}
        in <Link to={`/projects/${projectId}/deployments/${report.deployment_id}`}>deployment {report.deployment_id.slice(0, 8)}</Link>
      </span>
      {report.event === 'downloaded' ? (
        <span data-testid="download-kind"> · {downloadWords(report.detail)}</span>
      ) : (
        report.detail && <code className="detail">{JSON.stringify(report.detail)}</code>
      )}
    </span>
  );
}

/**
 * How a download came, from the detail the C client sends with `downloaded`
 * (docs/device-integration.md, "Delta updates"): as a patch of so many bytes, in full after a
 * patch failed, or in full.
 */
export function downloadWords(detail: DeviceEvent['detail']): string {
  const fields = (detail ?? {}) as { delta?: unknown; patch_bytes?: unknown; delta_failure?: unknown };
  if (fields.delta === 'applied') return typeof fields.patch_bytes === 'number' ? `as a delta patch of ${formatBytes(fields.patch_bytes)}` : 'as a delta patch';
  if (fields.delta === 'fell_back') return `in full, after the delta patch failed${typeof fields.delta_failure === 'string' ? ` (${fields.delta_failure})` : ''}`;
  return 'in full';
}

function CheckLine({ decision }: { decision: Decision }) {
  return (
    <span>
      <span className="tag check">checked</span> <strong title={decision.status}>{checkStatusWords(decision.status)}</strong>
      <span className="muted">
        {' '}
        {decision.message} (the device ran build {decision.reported_build_number ?? '?'})
      </span>
    </span>
  );
}
