import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { answer, api } from '../../api';
import { LoadState, StaleNote } from '../../components/feedback';
import { PlainTable } from '../../components/plain-table';
import { RelativeTime } from '../../components/time';
import { queryKeys } from '../../query-keys';
import type { Deployment } from '../../types';
import { reasonWords, whereWords } from '../crashes';

const REFRESH_MS = 10_000;

/**
 * The crashes of the deployment's build since it started, from the core dumps its devices sent
 * (docs/api.md, "Core dumps"): the ways no earlier build crashed are marked new, and, where the
 * health guardrail counts the hours run, how many device-hours went without a core dump.
 */
export function CrashesSection({ deployment: d, live }: { deployment: Deployment; live: boolean }) {
  const crashes = useQuery({
    queryKey: queryKeys.deploymentCrashes(d.id),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/crashes/', { params: { path: { id: d.project_id }, query: { deployment_id: d.id } } })),
    enabled: d.state !== 'draft',
    refetchInterval: live ? REFRESH_MS : false,
  });
  const health = useQuery({
    queryKey: queryKeys.health(d.id),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/deployments/{did}/health/', { params: { path: { id: d.project_id, did: d.id } } })),
    enabled: d.guardrails.health_regression !== null && d.state !== 'draft',
    refetchInterval: live ? REFRESH_MS : false,
  });
  if (d.state === 'draft') return null;
  const groups = crashes.data ?? [];
  const dumps = groups.reduce((sum, group) => sum + group.count, 0);
  const hours = health.data?.updated.device_hours ?? 0;
  return (
    <section aria-labelledby="crashes">
      <h2 id="crashes">
        Crashes <span className="muted small-text">core dumps of build {d.build_number} since the start</span>
      </h2>
      {hours >= 1 && (
        <p data-testid="crash-free-hours">
          <strong>{crashFreeWords(dumps, hours)}</strong> of {Math.round(hours).toLocaleString()} device-hours on build {d.build_number} went without a core dump
          ({dumps.toLocaleString()} {dumps === 1 ? 'dump' : 'dumps'}).
        </p>
      )}
      <LoadState loading={crashes.isLoading} error={crashes.data ? null : crashes.error} empty={groups.length === 0 && 'No core dumps from this build yet.'}>
        <PlainTable caption="Crash groups of the build" headers={['Crash', 'Where', 'Crashes', 'Devices', 'Last seen']}>
          {groups.map((group) => (
            <tr key={group.id}>
              <td>
                <Link to={`/projects/${d.project_id}/crashes/${group.id}`}>{reasonWords(group.reason)}</Link>
                {group.new_in_build && (
                  <>
                    {' '}
                    <span className="tag">new in this build</span>
                  </>
                )}
              </td>
              <td>{whereWords(group.frames)}</td>
              <td>{group.count.toLocaleString()}</td>
              <td>{group.devices.toLocaleString()}</td>
              <td>
                <RelativeTime at={group.last_seen} />
              </td>
            </tr>
          ))}
        </PlainTable>
      </LoadState>
      <StaleNote error={crashes.data ? crashes.error : null} updatedAt={crashes.dataUpdatedAt} />
    </section>
  );
}

/** The share of device-hours without a dump, counting each dump against the hour it ended. */
function crashFreeWords(dumps: number, hours: number): string {
  const share = Math.max(0, 1 - dumps / hours) * 100;
  return `${share >= 99.95 && dumps > 0 ? '99.9' : share.toFixed(1)}%`;
}
