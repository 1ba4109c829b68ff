import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { get, post } from '../api';
import { DataTable } from '../components/data-table';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState } from '../components/feedback';
import { PreviewBar, RolloutBar } from '../components/rollout-bar';
import { RelativeTime } from '../components/time';
import { namesById, projectPath, useChannels, useGroups } from '../queries';
import { PREVIEW_OUTCOMES, type Deployment, type DeploymentPreview, type DeploymentState, type DeploymentSummary, type Device, type DeviceState, type Guardrails } from '../types';
import { InlineForm } from '../components/inline-form';

/** Which actions each state allows (decisions.md section 4), in the order they are offered. */
const ACTIONS: Record<DeploymentState, Array<'start' | 'pause' | 'resume' | 'complete' | 'cancel'>> = {
  draft: ['start', 'cancel'],
  active: ['pause', 'complete', 'cancel'],
  paused: ['resume', 'complete', 'cancel'],
  completed: [],
  cancelled: [],
};

const REFRESH_MS = 2_000;
const column = createColumnHelper<DeviceState & { name: string }>();

export function DeploymentPage() {
  const { projectId = '', deploymentId = '' } = useParams();
  const queryClient = useQueryClient();
  const base = `${projectPath(projectId)}/deployments/${deploymentId}`;
  const deployment = useQuery({ queryKey: ['deployment', deploymentId], queryFn: () => get<Deployment>(`${base}/`), refetchInterval: REFRESH_MS });
  const summary = useQuery({ queryKey: ['summary', deploymentId], queryFn: () => get<DeploymentSummary>(`${base}/summary/`), refetchInterval: REFRESH_MS });
  const states = useQuery({ queryKey: ['states', deploymentId], queryFn: () => get<DeviceState[]>(`${base}/states/`), refetchInterval: REFRESH_MS * 2 });
  const devices = useQuery({ queryKey: ['devices', projectId, ''], queryFn: () => get<Device[]>(`${projectPath(projectId)}/devices/?`) });
  // On demand: a preview reads every device of the project.
  const preview = useQuery({ queryKey: ['preview', deploymentId], queryFn: () => get<DeploymentPreview>(`${base}/preview/`), enabled: false });
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  const [percentage, setPercentage] = useState<number | ''>('');
  const [confirming, setConfirming] = useState<'start' | 'resume' | null>(null);
  const refresh = () => Promise.all(['deployment', 'summary', 'states'].map((key) => queryClient.invalidateQueries({ queryKey: [key, deploymentId] })));
  const transition = useMutation({
    mutationFn: (body: { action: string; rollout_percentage?: number; confirm_all?: boolean }) => post<Deployment>(`${base}/transition/`, body),
    onSuccess: refresh,
  });

  if (!deployment.data) return <LoadState loading={deployment.isLoading} error={deployment.error}>{null}</LoadState>;
  const d = deployment.data;
  const untargeted = d.target_group_ids.length === 0 && d.target_channel_ids.length === 0;
  const reach = summary.data?.targeted_devices;
  const groupNames = namesById(groups.data);
  const channelNames = namesById(channels.data);
  const deviceNames = new Map((devices.data ?? []).map((device) => [device.id, device.device_id]));
  const act = (action: 'start' | 'pause' | 'resume' | 'complete' | 'cancel') => {
    // A deployment with no targets reaches the whole project: say how many before it starts. Until the
    // count has loaded it asks as well, rather than sending a start the API would refuse.
    if ((action === 'start' || action === 'resume') && untargeted && (reach === undefined || reach >= 2)) setConfirming(action);
    else transition.mutate({ action });
  };
  const rows = (states.data ?? []).map((state) => ({ ...state, name: deviceNames.get(state.device_id) ?? state.device_id }));

  return (
    <>
      <p className="crumbs">
        <Link to={`/projects/${projectId}/deployments`}>Deployments</Link> /
      </p>
      <h1>
        Build {d.build_number} ({d.version_label}) <span className={`state state-${d.state}`}>{d.state}</span>
      </h1>
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
          {reach !== undefined && <span className="muted"> · {reach} devices</span>}
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
                <span className="muted">
                  {' '}
                  · next stage {d.stage.next_stage_needs_approval ? 'needs your ramp, due' : 'by itself'} <RelativeTime at={d.stage.next_stage_at} />
                </span>
              )}
            </dd>
          </>
        )}
        <dt>Guardrails</dt>
        <dd data-testid="guardrails">{guardrailsText(d.guardrails)}</dd>
        <dt>Started</dt>
        <dd>
          <RelativeTime at={d.started_at} never="not yet" />
        </dd>
        {d.notes && (
          <>
            <dt>Notes</dt>
            <dd>{d.notes}</dd>
          </>
        )}
      </dl>

      {d.guardrail_pause && d.state === 'paused' && (
        <p className="error" role="status" data-testid="guardrail-pause">
          Paused by the {d.guardrail_pause.guardrail === 'reason_limit' ? 'reason limit' : 'failure threshold'} <RelativeTime at={d.guardrail_pause.at} />: {d.guardrail_pause.detail}. Investigate,
          then resume.
        </p>
      )}

      <section aria-labelledby="steer">
        <h2 id="steer">Steer</h2>
        <div className="row">
          {ACTIONS[d.state].map((action) => (
            <BusyButton key={action} type="button" className={action === 'cancel' ? 'danger' : action === 'start' || action === 'resume' ? 'primary' : ''} busy={transition.isPending && transition.variables?.action === action} onClick={() => act(action)}>
              {action[0]!.toUpperCase() + action.slice(1)}
            </BusyButton>
          ))}
          {(d.state === 'active' || d.state === 'paused') && (
            <InlineForm
              onSubmit={() => {
                if (percentage !== '') transition.mutate({ action: 'ramp', rollout_percentage: percentage });
              }}
            >
              <label htmlFor="ramp">Ramp to</label>
              <input id="ramp" type="number" min={0} max={100} step={1} required value={percentage} onChange={(event) => setPercentage(event.target.value === '' ? '' : Number(event.target.value))} />
              <span>%</span>
              <BusyButton type="submit" busy={transition.isPending && transition.variables?.action === 'ramp'}>
                Ramp
              </BusyButton>
            </InlineForm>
          )}
          {ACTIONS[d.state].length === 0 && <p className="muted">This deployment has ended; create a new one to roll out again.</p>}
        </div>
        <ErrorNote error={transition.error} />
      </section>

      <section aria-labelledby="progress">
        <h2 id="progress">
          Progress <span className="muted small-text">refreshes every {REFRESH_MS / 1000} s</span>
        </h2>
        <LoadState loading={summary.isLoading} error={summary.error}>
          {summary.data && (
            <>
              <RolloutBar counts={summary.data.devices_by_status} />
              <p>
                Failures: <strong data-testid="failure-count">{summary.data.failure_count}</strong>
              </p>
              {summary.data.failures_by_reason.length > 0 && (
                <table className="compact" data-testid="failures-by-reason">
                  <caption>Failures by reason</caption>
                  <thead>
                    <tr>
                      <th scope="col">Reason</th>
                      <th scope="col">Failures</th>
                    </tr>
                  </thead>
                  <tbody>
                    {summary.data.failures_by_reason.map((row) => (
                      <tr key={row.reason ?? ''}>
                        <td>{row.reason ?? <span className="muted">(none given)</span>}</td>
                        <td>{row.count}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </>
          )}
        </LoadState>
      </section>

      <section aria-labelledby="preview">
        <h2 id="preview">Preview</h2>
        <div className="row">
          <BusyButton type="button" busy={preview.isFetching} onClick={() => void preview.refetch()}>
            {preview.data ? 'Preview again' : 'Preview the next checks'}
          </BusyButton>
          <span className="muted">
            {preview.isFetching
              ? `Deciding for every device of the project${reach === undefined ? '' : ` (this deployment targets ${reach})`}…`
              : 'What a check of each device of the project would answer now, decided by the check’s own rules.'}
          </span>
        </div>
        <ErrorNote error={preview.error} />
        {preview.data && !preview.isFetching && (
          <>
            <p>
              {preview.data.device_count} devices
              {preview.data.as_if_active && ` · as if ${d.state === 'draft' ? 'started' : 'resumed'} now, at ${preview.data.rollout_percentage}%`}
            </p>
            <PreviewBar outcomes={preview.data.outcomes} />
            <dl className="facts" data-testid="preview-samples">
              {PREVIEW_OUTCOMES.filter((outcome) => preview.data.outcomes[outcome].count > 0).map((outcome) => (
                <div key={outcome}>
                  <dt>{outcome.replaceAll('_', ' ')}</dt>
                  <dd>
                    {[...preview.data.outcomes[outcome].device_ids].sort().join(', ')}
                    {preview.data.outcomes[outcome].count > preview.data.outcomes[outcome].device_ids.length && <span className="muted"> and {preview.data.outcomes[outcome].count - preview.data.outcomes[outcome].device_ids.length} more</span>}
                  </dd>
                </div>
              ))}
            </dl>
          </>
        )}
      </section>

      <section aria-labelledby="per-device">
        <h2 id="per-device">Devices in this rollout</h2>
        <LoadState loading={states.isLoading} error={states.error} empty={rows.length === 0 && 'No device has been offered this build yet.'}>
          <DataTable
            rows={rows}
            caption="Per-device rollout states"
            initialSort={[{ id: 'updated_at', desc: true }]}
            columns={[
              column.accessor('name', { header: 'Device', cell: (info) => <Link to={`/projects/${projectId}/devices/${info.row.original.device_id}`}>{info.getValue()}</Link> }),
              column.accessor('status', { header: 'Status', cell: (info) => <span className={`status status-${info.getValue()}`}>{info.getValue()}</span> }),
              column.accessor('reason', { header: 'Reason', cell: (info) => info.getValue() || '' }),
              column.accessor('updated_at', { header: 'Updated', cell: (info) => <RelativeTime at={info.getValue()} /> }),
            ]}
          />
        </LoadState>
      </section>

      <ConfirmDialog
        open={confirming !== null}
        title={`${confirming === 'resume' ? 'Resume' : 'Start'} for every device?`}
        confirmLabel={`${confirming === 'resume' ? 'Resume' : 'Start'} for all ${reach === undefined ? '' : `${reach} `}devices`}
        onClose={() => setConfirming(null)}
        onConfirm={() => transition.mutateAsync({ action: confirming!, confirm_all: true })}
      >
        <p>
          This deployment names no group and no channel, so it reaches{' '}
          <strong>{reach === undefined ? 'every device' : `all ${reach} devices`}</strong> of the project (at {d.rollout_percentage}%)
          {reach === undefined ? ' (counting them…)' : ''}.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** The deployment's guardrails in one line, or that it has none. */
function guardrailsText(guardrails: Guardrails): string {
  const parts = [
    guardrails.failure_threshold && `pause at ${guardrails.failure_threshold.percent}% failed of at least ${guardrails.failure_threshold.min_finished} finished`,
    ...guardrails.reason_limits.map((limit) => `pause on ${limit.count} × ${limit.reason} within ${limit.window_seconds} s`),
    guardrails.confirm_timeout_seconds !== null && `silent ${guardrails.confirm_timeout_seconds} s after progress counts as failed`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join('; ') : 'none (steered by hand)';
}

/** A stage's wait in the largest whole unit that fits. */
function waitText(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
