import { useQuery } from '@tanstack/react-query';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { answer, api } from '../../api';
import { LoadState, StaleNote } from '../../components/feedback';
import type { Deployment, DeploymentHealth } from '../../types';
import { queryKeys } from '../../query-keys';

const REFRESH_MS = 10_000;
const UPDATED_COLOUR = '#d64545';
const PREVIOUS_COLOUR = '#3f72c9';

/**
 * How the build runs on the devices that installed it, against the targeted devices not yet
 * updated: abnormal resets per 1,000 device-hours per period, the figures the health guardrail
 * judges (docs/api.md, "Device health"). Shown for a deployment with that guardrail.
 */
export function HealthSection({ deployment: d, live }: { deployment: Deployment; live: boolean }) {
  const guardrail = d.guardrails.health_regression;
  const health = useQuery({
    queryKey: queryKeys.health(d.id),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/deployments/{did}/health/', { params: { path: { id: d.project_id, did: d.id } } })),
    enabled: guardrail !== null && d.state !== 'draft',
    refetchInterval: live ? REFRESH_MS : false,
  });
  if (!guardrail) return null;
  return (
    <section aria-labelledby="device-health">
      <h2 id="device-health">
        Device health <span className="muted small-text">abnormal resets (panic, watchdog, brownout) per 1,000 hours run</span>
      </h2>
      {d.state === 'draft' ? (
        <p className="muted">Counted once the deployment starts, from the health devices report with their checks.</p>
      ) : health.data ? (
        <HealthFigures health={health.data} guardrail={guardrail} buildNumber={d.build_number} />
      ) : (
        <LoadState loading={health.isLoading} error={health.error}>
          {null}
        </LoadState>
      )}
      <StaleNote error={health.data ? health.error : null} updatedAt={health.dataUpdatedAt} />
    </section>
  );
}

type Side = DeploymentHealth['updated'];

function HealthFigures({ health, guardrail, buildNumber }: { health: DeploymentHealth; guardrail: NonNullable<Deployment['guardrails']['health_regression']>; buildNumber: number }) {
  const rows = health.periods.map((period) => ({
    at: new Date(period.start).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }),
    updated: rounded(period.updated.resets_per_1000_device_hours),
    previous: rounded(period.previous.resets_per_1000_device_hours),
  }));
  return (
    <figure className="health-chart" aria-label="Abnormal resets per 1,000 device-hours, on the build and on earlier builds">
      {rows.length === 0 ? (
        <p className="muted">No device has reported its health since the start yet: devices send it with their checks (the C client does).</p>
      ) : (
        <ResponsiveContainer width="100%" height={220}>
          <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="at" />
            <YAxis allowDecimals />
            <Tooltip />
            <Legend />
            <Line type="monotone" dataKey="updated" name={`on build ${buildNumber}`} stroke={UPDATED_COLOUR} connectNulls isAnimationActive={false} />
            <Line type="monotone" dataKey="previous" name="not yet updated" stroke={PREVIOUS_COLOUR} connectNulls isAnimationActive={false} />
          </LineChart>
        </ResponsiveContainer>
      )}
      <figcaption>
        <ul className="counts" data-testid="health-figures">
          <li data-side="updated">
            <span className="swatch" style={{ background: UPDATED_COLOUR }} aria-hidden="true" />
            On build {buildNumber}: <SideText side={health.updated} />
          </li>
          <li data-side="previous">
            <span className="swatch" style={{ background: PREVIOUS_COLOUR }} aria-hidden="true" />
            Not yet updated: <SideText side={health.previous} />
          </li>
        </ul>
        {!health.judging && health.not_judging_because && (
          <p data-testid="not-judging">
            <strong>Not judging yet:</strong> {health.not_judging_because.replace(/^waiting for enough to judge: /, 'waiting for ')}.
          </p>
        )}
        <p className="muted small-text">
          Pauses when the build&apos;s rate is more than {guardrail.margin_percent}% above the other&apos;s at a significance of {guardrail.significance}, once each side has{' '}
          {guardrail.min_devices} devices and {guardrail.min_device_hours} device-hours
          {health.judged_since ? ` (hours counted since the resume at ${new Date(health.judged_since).toLocaleString()})` : ''}.
        </p>
      </figcaption>
    </figure>
  );
}

function SideText({ side }: { side: Side }) {
  const rate = side.resets_per_1000_device_hours;
  return (
    <>
      <strong>{rate === null ? 'no hours yet' : `${rounded(rate)} per 1,000 h`}</strong> ({side.abnormal_resets} resets in {Math.round(side.device_hours)} h of {side.devices} device
      {side.devices === 1 ? '' : 's'})
    </>
  );
}

function rounded(rate: number | null): number | null {
  return rate === null ? null : Math.round(rate * 10) / 10;
}
