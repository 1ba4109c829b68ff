import { useQuery } from '@tanstack/react-query';
import { useSearchParams, useParams } from 'react-router-dom';
import { Area, AreaChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { answer, api } from '../api';
import { LoadState, StaleNote } from '../components/feedback';
import { PlainTable } from '../components/plain-table';
import { queryKeys } from '../query-keys';
import { useArtifacts, useChannels, useGroups } from '../queries';
import type { FleetBuilds } from '../types';

const DAY_CHOICES = [7, 30, 90] as const;
/** The newest builds get their own colours; older ones share grey, as the eye wants the new ones. */
const BUILD_COLOURS = ['#1f7a45', '#2f5fb0', '#c98a00', '#8e44ad', '#c0392b', '#16a085'];
const OLDER_COLOUR = '#9aa3b0';

/**
 * Which builds the fleet runs and how each was taken up (docs/api.md, "Fleet builds"): a stacked
 * area of devices per build over the snapshots, ending with the count now, of the project, one
 * channel or one group; and today's figures in words.
 */
export function FleetPage() {
  const { projectId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const scope = params.get('scope') ?? '';
  const days = Number(params.get('days') ?? 30);
  const [kind, scopeId] = scope.split(':') as ['' | 'channel' | 'group', string | undefined];
  const channels = useChannels(projectId);
  const groups = useGroups(projectId);
  const builds = useArtifacts(projectId);
  const fleet = useQuery({
    queryKey: queryKeys.fleetBuilds(projectId, scope, days),
    queryFn: () =>
      answer(
        api.GET('/api/v1/projects/{id}/fleet/builds/', {
          params: { path: { id: projectId }, query: { days, ...(kind === 'channel' ? { channel_id: scopeId } : {}), ...(kind === 'group' ? { group_id: scopeId } : {}) } },
        }),
      ),
    refetchInterval: 60_000,
  });
  const labels = new Map((builds.data ?? []).map((build) => [build.build_number, build.version_label]));
  const choose = (next: Record<string, string>) => setParams({ ...(scope ? { scope } : {}), ...(days !== 30 ? { days: String(days) } : {}), ...next }, { replace: true });
  return (
    <>
      <h1>Fleet</h1>
      <p className="muted">Which builds the active devices run (the last build each confirmed here): counted now, and kept each hour.</p>
      <form className="filters" aria-label="Which devices, over which time" onSubmit={(event) => event.preventDefault()}>
        <label>
          Devices
          <select aria-label="Which devices" value={scope} onChange={(event) => choose({ scope: event.target.value })}>
            <option value="">the whole project</option>
            {(channels.data ?? []).map((channel) => (
              <option key={channel.id} value={`channel:${channel.id}`}>{`channel ${channel.name}`}</option>
            ))}
            {(groups.data ?? []).map((group) => (
              <option key={group.id} value={`group:${group.id}`}>{`group ${group.name}`}</option>
            ))}
          </select>
        </label>
        <label>
          Over
          <select aria-label="Over how many days" value={String(days)} onChange={(event) => choose({ days: event.target.value })}>
            {DAY_CHOICES.map((choice) => (
              <option key={choice} value={choice}>{`the last ${choice} days`}</option>
            ))}
          </select>
        </label>
      </form>
      <StaleNote error={fleet.data ? fleet.error : null} updatedAt={fleet.dataUpdatedAt} />
      {fleet.data ? <FleetFigures fleet={fleet.data} labels={labels} /> : <LoadState loading={fleet.isLoading} error={fleet.error}>{null}</LoadState>}
    </>
  );
}

function buildName(build: number, labels: Map<number, string>): string {
  if (build === 0) return 'no build confirmed yet';
  const label = labels.get(build);
  return label ? `build ${build} (${label})` : `build ${build}`;
}

function FleetFigures({ fleet, labels }: { fleet: FleetBuilds; labels: Map<number, string> }) {
  const points = [...fleet.history, fleet.now];
  const total = fleet.now.builds.reduce((sum, count) => sum + count.devices, 0);
  if (points.every((point) => point.builds.length === 0)) return <p className="muted">No active device has checked in yet.</p>;
  // Every build seen in the window, newest first: the newest get colours, the legend reads down from them.
  const seen = [...new Set(points.flatMap((point) => point.builds.map((count) => count.build_number)))].sort((a, b) => b - a);
  const colourOf = (build: number) => BUILD_COLOURS[seen.indexOf(build)] ?? OLDER_COLOUR;
  const rows = points.map((point) => ({
    at: new Date(point.at).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }),
    ...Object.fromEntries(seen.map((build) => [`b${build}`, point.builds.find((count) => count.build_number === build)?.devices ?? 0])),
  }));
  return (
    <figure className="fleet-chart" aria-label={`Devices per build over time; now ${fleet.now.builds.map((count) => `${count.devices} on ${buildName(count.build_number, labels)}`).join(', ')}`}>
      {rows.length > 1 ? (
        <ResponsiveContainer width="100%" height={280}>
          <AreaChart data={rows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="at" />
            <YAxis allowDecimals={false} />
            <Tooltip />
            <Legend />
            {[...seen].reverse().map((build) => (
              <Area key={build} type="stepAfter" dataKey={`b${build}`} name={buildName(build, labels)} stackId="fleet" stroke={colourOf(build)} fill={colourOf(build)} fillOpacity={0.55} isAnimationActive={false} />
            ))}
          </AreaChart>
        </ResponsiveContainer>
      ) : (
        <p className="muted">No snapshot is kept yet: the chart over time starts with the first one (each hour).</p>
      )}
      <figcaption>
        <PlainTable caption="Devices per build now" headers={['Build', 'Devices', 'Share']}>
          {[...fleet.now.builds].reverse().map((count) => (
            <tr key={count.build_number} data-testid={`fleet-now-${count.build_number}`}>
              <td>
                <span className="swatch" style={{ background: colourOf(count.build_number) }} aria-hidden="true" />
                {buildName(count.build_number, labels)}
              </td>
              <td>{count.devices}</td>
              <td>{total > 0 ? `${Math.round((100 * count.devices) / total)}%` : ''}</td>
            </tr>
          ))}
        </PlainTable>
      </figcaption>
    </figure>
  );
}
