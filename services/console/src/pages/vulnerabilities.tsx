import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { answer, api } from '../api';
import { LoadState, StaleNote } from '../components/feedback';
import { PlainTable } from '../components/plain-table';
import { Timestamp } from '../components/time';
import { queryKeys } from '../query-keys';
import type { VulnerabilityReport } from '../types';

/** The project's recorded vulnerabilities (docs/api.md, "Vulnerabilities"), the latest known first. */
export function VulnerabilitiesPage() {
  const { projectId = '' } = useParams();
  const list = useQuery({ queryKey: queryKeys.vulnerabilities(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/vulnerabilities/', { params: { path: { id: projectId } } })) });
  const rows = list.data ?? [];
  return (
    <>
      <h1>Vulnerabilities</h1>
      <p className="muted">
        Advisories recorded against a component of the builds' SBOMs (<code>POST .../vulnerabilities/</code>), with the devices they reached then, and each one's report for the
        Cyber Resilience Act.
      </p>
      <LoadState loading={list.isLoading} error={list.error} empty={rows.length === 0 && 'No vulnerability recorded.'}>
        <PlainTable caption="Vulnerabilities" headers={['Advisory', 'Component', 'Versions', 'Known since', 'Devices when recorded']}>
          {rows.map((vulnerability) => (
            <tr key={vulnerability.id}>
              <td>
                <Link to={vulnerability.id}>{vulnerability.id}</Link>
              </td>
              <td>{vulnerability.component.name ?? vulnerability.component.purl ?? vulnerability.component.cpe}</td>
              <td>{vulnerability.versions ?? 'every version'}</td>
              <td>
                <Timestamp at={vulnerability.known_at} />
              </td>
              <td>{vulnerability.exposure_when_recorded.devices}</td>
            </tr>
          ))}
        </PlainTable>
      </LoadState>
    </>
  );
}

/** One vulnerability's report: the devices still affected each day as the fix rolls out, and what the reports need. */
export function VulnerabilityPage() {
  const { projectId = '', advisoryId = '' } = useParams();
  const params = { path: { id: projectId, vid: advisoryId } };
  const report = useQuery({
    queryKey: queryKeys.vulnerabilityReport(projectId, advisoryId),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/vulnerabilities/{vid}/report/', { params })),
    refetchInterval: 60_000,
  });
  return (
    <>
      <p className="crumbs">
        <Link to={`/projects/${projectId}/vulnerabilities`}>Vulnerabilities</Link> /
      </p>
      <h1>{advisoryId}</h1>
      <StaleNote error={report.data ? report.error : null} updatedAt={report.dataUpdatedAt} />
      {report.data ? <ReportFigures projectId={projectId} report={report.data} /> : <LoadState loading={report.isLoading} error={report.error}>{null}</LoadState>}
    </>
  );
}

function ReportFigures({ projectId, report }: { projectId: string; report: VulnerabilityReport }) {
  const rows = report.devices_per_day.map((entry) => ({ day: entry.day, devices: entry.devices }));
  return (
    <>
      <p className="headline" data-testid="vulnerability-headline">
        <strong>
          {report.devices_now} device{report.devices_now === 1 ? '' : 's'} affected now
        </strong>{' '}
        <span className="muted">
          ({report.devices_when_recorded} when recorded; known since <Timestamp at={report.known_at} />)
        </span>
        {report.unknown_now.devices + report.unknown_now.never_updated > 0 && (
          <span className="muted">
            {' '}
            · {report.unknown_now.devices + report.unknown_now.never_updated} that cannot be said (builds without an SBOM, or no build confirmed)
          </span>
        )}
      </p>
      <p data-testid="vulnerability-fix">
        {report.fix ? (
          <>
            Fix: <Link to={`/projects/${projectId}/deployments/${report.fix.deployment_id}`}>build {report.fix.build_number}</Link>, {report.fix.state} at {report.fix.rollout_percentage}%
          </>
        ) : (
          <span className="danger-text">No deployment of a build without it yet.</span>
        )}
      </p>
      <figure className="fleet-chart" aria-label={`Devices affected each day; ${report.devices_now} now`}>
        <ResponsiveContainer width="100%" height={220}>
          <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="day" />
            <YAxis allowDecimals={false} />
            <Tooltip />
            <Line type="stepAfter" dataKey="devices" name="devices affected" stroke="#c0392b" isAnimationActive={false} />
          </LineChart>
        </ResponsiveContainer>
        <figcaption className="muted small-text">
          The last hourly fleet snapshot of each UTC day, and today now.{' '}
          <a href={`/api/v1/projects/${projectId}/vulnerabilities/${report.id}/report/days/`} download>
            Days as CSV
          </a>
        </figcaption>
      </figure>
      <p>
        Affected builds: {report.affected_builds.length === 0 ? <span className="muted">none</span> : report.affected_builds.map((build) => `build ${build.build_number}`).join(', ')}
      </p>
    </>
  );
}
