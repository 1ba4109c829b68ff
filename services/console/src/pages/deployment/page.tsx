import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { answer, api } from '../../api';
import { LoadState, StaleNote } from '../../components/feedback';
import { RelativeTime, Timestamp, useNow } from '../../components/time';
import { namesById, useChannels, useGroups } from '../../queries';
import type { Deployment, Guardrails } from '../../types';
import { RoleControls, useProjectRole } from '../../project-access';
import { DeviceStates } from './device-states';
import { DownloadsLine } from '../../components/downloads';
import { CrashesSection } from './crashes';
import { HealthSection } from './health';
import { Preview } from './preview';
import { Progress } from './progress';
import { Steer } from './steer';
import { queryKeys } from '../../query-keys';
import { totalWords } from '../../words';

const REFRESH_MS = 2_000;

export function DeploymentPage() {
  const { projectId = '', deploymentId = '' } = useParams();
  const queryClient = useQueryClient();
  const role = useProjectRole(projectId);
  const params = { path: { id: projectId, did: deploymentId } };
  const deployment = useQuery({ queryKey: queryKeys.deployment(deploymentId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/deployments/{did}/', { params })), refetchInterval: (query) => (ended(query.state.data) ? false : REFRESH_MS) });
  const isEnded = ended(deployment.data);
  const summary = useQuery({ queryKey: queryKeys.summary(deploymentId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/deployments/{did}/summary/', { params })), refetchInterval: isEnded ? false : REFRESH_MS });
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  const refresh = () => Promise.all([queryKeys.deployment(deploymentId), queryKeys.summary(deploymentId), queryKeys.states(deploymentId)].map((queryKey) => queryClient.invalidateQueries({ queryKey })));

  if (!deployment.data) return <LoadState loading={deployment.isLoading} error={deployment.error}>{null}</LoadState>;
  const d = deployment.data;
  const reach = summary.data?.targeted_devices;

  return (
    <>
      <p className="crumbs">
        <Link to={`/projects/${projectId}/deployments`}>Deployments</Link> /
      </p>
      <h1>
        Build {d.build_number} ({d.version_label}) <span className={`state state-${d.state}`}>{d.state}</span>
      </h1>
      <StaleNote error={deployment.error} updatedAt={deployment.dataUpdatedAt} />
      <Facts deployment={d} reach={reach} reachEstimated={summary.data?.targeted_devices_estimated ?? false} groupNames={namesById(groups.data)} channelNames={namesById(channels.data)} />
      <GuardrailBanner deployment={d} />
      <RoleControls projectId={projectId} what="Steering this deployment">
        <Steer deployment={d} reach={reach} role={role} onChanged={refresh} />
      </RoleControls>

      <section aria-labelledby="progress">
        <h2 id="progress">
          Progress <span className="muted small-text">{isEnded ? `final: the deployment is ${d.state}` : `refreshes every ${REFRESH_MS / 1000} s`}</span>
        </h2>
        <StaleNote error={summary.error} updatedAt={summary.dataUpdatedAt} />
        {summary.data ? <Progress summary={summary.data} windowZone={d.maintenance_windows?.time_zone ?? null} /> : <LoadState loading={summary.isLoading} error={summary.error}>{null}</LoadState>}
      </section>

      <DeploymentDownloads deployment={d} live={!isEnded} />

      <HealthSection deployment={d} live={!isEnded} />

      <CrashesSection deployment={d} live={!isEnded} />

      <Preview deployment={d} reach={reach} />

      <DeviceStates deployment={d} refreshMs={isEnded ? false : REFRESH_MS * 2} />
    </>
  );
}

/** How the build reached the devices: delta patches, whole images, and the bytes the patches saved. */
function DeploymentDownloads({ deployment: d, live }: { deployment: Deployment; live: boolean }) {
  const downloads = useQuery({
    queryKey: queryKeys.deploymentDownloads(d.id),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/deployments/{did}/downloads/', { params: { path: { id: d.project_id, did: d.id } } })),
    refetchInterval: live ? REFRESH_MS * 5 : false,
  });
  return (
    <section aria-labelledby="downloads">
      <h2 id="downloads">Downloads</h2>
      <StaleNote error={downloads.data ? downloads.error : null} updatedAt={downloads.dataUpdatedAt} />
      {downloads.data ? <DownloadsLine downloads={downloads.data} testId="deployment-downloads" /> : <LoadState loading={downloads.isLoading} error={downloads.error}>{null}</LoadState>}
    </section>
  );
}

/**
 * When the plan moves on, as it stands: a paused deployment moves nowhere until it is resumed, and
 * a time gone by means the next supervision moves it (or waits for an approver), not "2 minutes ago".
 */
function NextStage({ deployment: d, at }: { deployment: Deployment; at: string }) {
  const now = useNow();
  const due = new Date(at).getTime() <= now;
  const approval = d.stage?.next_stage_needs_approval ?? false;
  if (d.state === 'paused') return <>next stage when resumed{approval ? ' and ramped' : ''}</>;
  if (approval) return due ? <>next stage needs your ramp, due now</> : <>next stage needs your ramp, due <RelativeTime at={at} /></>;
  return due ? <>next stage due now, within the next supervision</> : <>next stage by itself <RelativeTime at={at} /></>;
}

function ended(deployment: Deployment | undefined): boolean {
  return deployment?.state === 'completed' || deployment?.state === 'cancelled';
}

function Facts({
  deployment: d,
  reach,
  reachEstimated,
  groupNames,
  channelNames,
}: {
  deployment: Deployment;
  reach: number | undefined;
  reachEstimated: boolean;
  groupNames: Map<string, string>;
  channelNames: Map<string, string>;
}) {
  const untargeted = d.target_group_ids.length === 0 && d.target_channel_ids.length === 0;
  return (
    <dl className="facts">
      <dt>Targets</dt>
      <dd>
        {untargeted
          ? 'every device of the project'
          : [
              d.target_group_ids.length ? `groups ${d.target_group_ids.map((id) => groupNames.get(id) ?? id).join(', ')}` : '',
              d.target_channel_ids.length ? `channels ${d.target_channel_ids.map((id) => channelNames.get(id) ?? id).join(', ')}` : '',
            ]
              .filter(Boolean)
              .join(' and ')}
        {reach !== undefined && <span className="muted"> · {totalWords({ count: reach, estimated: reachEstimated })} devices</span>}
      </dd>
      <dt>Rollout</dt>
      <dd data-testid="rollout-percentage">{d.rollout_percentage}%</dd>
      {d.stages.length > 0 && (
        <>
          <dt>Plan</dt>
          <dd data-testid="stage">
            {d.stage && d.state !== 'draft' ? `stage ${d.stage.index + 1} of ${d.stages.length}` : `${d.stages.length} stages`} (
            {d.stages.map((stage, index) => `${index > 0 && stage.approval_required ? 'your ramp to ' : ''}${stage.percentage}%${stage.min_wait_seconds ? ` for ${waitText(stage.min_wait_seconds)}` : ''}`).join(' → ')})
            {d.stage?.next_stage_at && (
              <span className="muted" data-testid="next-stage">
                {' '}
                · <NextStage deployment={d} at={d.stage.next_stage_at} />
              </span>
            )}
          </dd>
        </>
      )}
      <dt>Guardrails</dt>
      <dd data-testid="guardrails">{guardrailsText(d.guardrails)}</dd>
      <dt>When</dt>
      <dd data-testid="maintenance-windows">{windowsText(d.maintenance_windows)}</dd>
      <dt>Pace</dt>
      <dd data-testid="caps">{capsText(d.caps)}</dd>
      <dt>Started</dt>
      <dd>
        <Timestamp at={d.started_at} never="not yet" />
      </dd>
      {d.notes && (
        <>
          <dt>Notes</dt>
          <dd>{d.notes}</dd>
        </>
      )}
    </dl>
  );
}

/** Why a guardrail paused it: kept after the deployment ended, since that is often why it did. */
function GuardrailBanner({ deployment: d }: { deployment: Deployment }) {
  const pause = d.guardrail_pause;
  if (!pause) return null;
  const guardrail = GUARDRAIL_WORDS[pause.guardrail];
  if (d.state === 'paused') {
    return (
      <p className="error" role="status" data-testid="guardrail-pause">
        Paused by the {guardrail} at <Timestamp at={pause.at} />: {pause.detail}. Investigate, then resume.
      </p>
    );
  }
  return (
    <p className="stale" role="status" data-testid="guardrail-pause">
      The {guardrail} paused it at <Timestamp at={pause.at} />: {pause.detail}. It was then {d.state}.
    </p>
  );
}

const GUARDRAIL_WORDS: Record<NonNullable<Deployment['guardrail_pause']>['guardrail'], string> = {
  failure_threshold: 'failure threshold',
  reason_limit: 'reason limit',
  health_regression: 'health guardrail (updated devices crash more often)',
};

/** The deployment's guardrails in one line, or that it has none. */
function guardrailsText(guardrails: Guardrails): string {
  const parts = [
    guardrails.failure_threshold && `pause at ${guardrails.failure_threshold.percent}% failed of at least ${guardrails.failure_threshold.min_finished} finished`,
    ...guardrails.reason_limits.map((limit) => `pause on ${limit.count} × ${limit.reason} within ${limit.window_seconds} s`),
    guardrails.confirm_timeout_seconds !== null && `silent ${guardrails.confirm_timeout_seconds} s after progress counts as failed`,
    guardrails.health_regression && `pause when updated devices reset abnormally more than ${guardrails.health_regression.margin_percent}% more often than those not yet updated`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join('; ') : 'none (steered by hand)';
}

/** The deployment's offer caps in one line, or that it has none. */
function capsText(caps: Deployment['caps']): string {
  const parts = [
    caps?.offers_per_minute && `at most ${caps.offers_per_minute} new offers a minute`,
    caps?.max_in_progress && `at most ${caps.max_in_progress} devices updating at once`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'as fast as devices check';
}

/** The deployment's maintenance windows in one line, or that it offers at any time. */
function windowsText(schedule: Deployment['maintenance_windows']): string {
  if (!schedule) return 'at any time';
  const windows = schedule.windows.map((window) => `${window.days.join(', ')} from ${window.start} for ${waitText(window.duration_minutes * 60)}`);
  const where = schedule.in_device_local_time ? `in each device's local time (${schedule.time_zone} for devices that report none)` : schedule.time_zone;
  return `only in maintenance windows: ${windows.join('; ')}, ${where}`;
}

/** A stage's wait in the largest whole unit that fits. */
function waitText(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
