import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { operations } from '../../../generated/api';
import { answer, api, ApiError } from '../../api';
import { BuildHolds } from '../../components/build-holds';
import { BusyButton, ConfirmDialog, ErrorNote } from '../../components/feedback';
import { InlineForm } from '../../components/inline-form';
import { roleAllows, roleReason, type Role } from '../../project-access';
import { useBuildHolds } from '../../queries';
import type { Deployment, DeploymentState } from '../../types';

type Action = 'start' | 'pause' | 'resume' | 'complete' | 'cancel';

/** Which actions each state allows (docs/api.md, "Deployment states"), in the order they are offered. */
const ACTIONS: Record<DeploymentState, Action[]> = {
  draft: ['start', 'cancel'],
  active: ['pause', 'complete', 'cancel'],
  paused: ['resume', 'complete', 'cancel'],
  completed: [],
  cancelled: [],
};

/** What a pause, a complete or a cancel does to devices mid-download (docs/api.md, "Stopping devices mid-update"). */
const STOP_DETAIL =
  'devices that have not yet installed it stop within 256 KiB of their download (with the C client) and before they switch to it; devices that already switched keep it and report confirmed.';
const STOP_GUARANTEE = `A pause, a complete or a cancel reaches devices mid-download: ${STOP_DETAIL} A pause keeps what they downloaded, and a resume continues from it.`;

const LABELS: Record<Action, string> = { start: 'Start', pause: 'Pause', resume: 'Resume', complete: 'Complete…', cancel: 'Cancel deployment…' };

/**
 * The deployment's actions. Complete and cancel are final, so each asks first and says what it
 * ends; cancel wants "cancel build N" typed, which no slip of the keyboard makes. A start that reaches the whole project asks with the
 * device count; a resume always asks, saying the percentage it resumes at (docs/api.md,
 * "Deployment states"). While another deployment holds the build back, a start, resume or upward
 * ramp is an approver's, who is asked to go around the holds by name.
 */
type Transition = operations['transitionDeployment']['requestBody']['content']['application/json'];

export function Steer({ deployment: d, reach, role, onChanged }: { deployment: Deployment; reach: number | undefined; role: Role | undefined; onChanged: () => Promise<unknown> }) {
  const [percentage, setPercentage] = useState<number | ''>('');
  const [asking, setAsking] = useState<'start' | 'resume' | 'ramp' | 'complete' | 'cancel' | null>(null);
  const holds = (useBuildHolds(d.project_id, d.artifact_id).data ?? []).filter((hold) => hold.deployment_id !== d.id);
  // Every action names the version it was decided on (If-Match): one another tab, person or
  // guardrail changed since is refused with what it is now, and the page reads it again.
  const transition = useMutation({
    mutationFn: (body: Transition) =>
      answer(api.POST('/api/v1/projects/{id}/deployments/{did}/transition/', { params: { path: { id: d.project_id, did: d.id }, header: { 'If-Match': `"${d.version}"` } }, body })),
    onSuccess: onChanged,
    onError: (error) => {
      if (error instanceof ApiError && error.status === 409) void onChanged();
    },
  });
  const untargeted = d.target_group_ids.length === 0 && d.target_channel_ids.length === 0;
  const approver = roleAllows(role, 'approver');
  const held = holds.length > 0;
  const act = (action: Action) => {
    // Until the count has loaded a target-less start asks as well, rather than sending a start the API would refuse.
    if (action === 'start' && ((untargeted && (reach === undefined || reach >= 2)) || held)) setAsking(action);
    else if (action === 'resume' || action === 'complete' || action === 'cancel') setAsking(action);
    else transition.mutate({ action });
  };
  const actions = ACTIONS[d.state];
  // What is an approver's (docs/api.md, "Roles") is shown, not hidden, with the reason.
  const guardrailPaused = d.state === 'paused' && d.guardrail_pause !== null;
  const needsApprover = (action: Action) => !approver && ((action === 'resume' && guardrailPaused) || ((action === 'start' || action === 'resume') && held));
  const gateAhead = d.stage?.next_stage_needs_approval === true && !approver;
  const widening = { ...(untargeted ? { confirm_all: true } : {}), ...(held ? { override_holds: true } : {}) };
  const approverNotes = [
    guardrailPaused ? 'resuming after a guardrail pause' : '',
    gateAhead ? 'ramping past the next stage, which needs approval' : '',
    held ? 'starting, resuming or ramping up a build another deployment holds' : '',
  ].filter(Boolean);
  return (
    <section aria-labelledby="steer">
      <h2 id="steer">Steer</h2>
      <div className="row">
        {actions.map((action) => (
          <BusyButton
            key={action}
            type="button"
            className={action === 'cancel' ? 'danger' : action === 'start' || action === 'resume' ? 'primary' : ''}
            busy={transition.isPending && transition.variables?.action === action}
            disabled={needsApprover(action)}
            title={needsApprover(action) ? roleReason(role, 'approver') : undefined}
            onClick={() => act(action)}
          >
            {LABELS[action]}
          </BusyButton>
        ))}
        {(d.state === 'active' || d.state === 'paused') && (
          <InlineForm
            onSubmit={() => {
              if (percentage === '') return;
              // Upwards past a hold, an approver is asked first; anyone else hears the API's reason.
              if (held && approver && percentage > d.rollout_percentage) setAsking('ramp');
              else transition.mutate({ action: 'ramp', rollout_percentage: percentage });
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
        {actions.length === 0 && <p className="muted">This deployment has ended; create a new one to roll out again.</p>}
      </div>
      {held && d.state !== 'completed' && d.state !== 'cancelled' && <BuildHolds projectId={d.project_id} buildNumber={d.build_number} holds={holds} testId="build-holds" />}
      {approverNotes.length > 0 && !approver && (
        <p className="muted" data-testid="approver-note">
          {approverNotes.join('; ').replace(/^./, (first) => first.toUpperCase())}: {approverNotes.length === 1 ? 'this needs' : 'these need'} the approver role; yours is {role ?? 'unknown'}.
        </p>
      )}
      {(d.state === 'active' || d.state === 'paused') && <p className="muted">{STOP_GUARANTEE}</p>}
      <ErrorNote error={transition.error} />

      <ConfirmDialog
        open={asking === 'start'}
        title={held ? `Start build ${d.build_number} although it is held?` : 'Start for every device?'}
        confirmLabel={held ? 'Start, going around the holds' : `Start for all ${reach === undefined ? '' : `${reach} `}devices`}
        danger={held}
        onClose={() => setAsking(null)}
        onConfirm={() => transition.mutateAsync({ action: 'start', ...widening })}
      >
        {untargeted && <ReachWords deployment={d} reach={reach} />}
        {held && <BuildHolds projectId={d.project_id} buildNumber={d.build_number} holds={holds} />}
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'resume'}
        title={`Resume at ${d.rollout_percentage}%?`}
        confirmLabel={`Resume at ${d.rollout_percentage}%`}
        danger={held}
        onClose={() => setAsking(null)}
        onConfirm={() => transition.mutateAsync({ action: 'resume', rollout_percentage: d.rollout_percentage, ...widening })}
      >
        {d.guardrail_pause && (
          <p>
            The {d.guardrail_pause.guardrail} guardrail paused it: {d.guardrail_pause.detail}
          </p>
        )}
        <p>
          It offers build {d.build_number} ({d.version_label}) again to <strong>{d.rollout_percentage}%</strong> of its targets, the percentage it holds now
          {d.guardrail_pause ? ' (a ramp while paused counts)' : ''}.
        </p>
        {untargeted && <ReachWords deployment={d} reach={reach} />}
        {held && <BuildHolds projectId={d.project_id} buildNumber={d.build_number} holds={holds} />}
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'ramp'}
        title={`Ramp build ${d.build_number} to ${percentage}% although it is held?`}
        confirmLabel="Ramp, going around the holds"
        danger
        onClose={() => setAsking(null)}
        onConfirm={() => transition.mutateAsync({ action: 'ramp', rollout_percentage: percentage === '' ? d.rollout_percentage : percentage, override_holds: true })}
      >
        <BuildHolds projectId={d.project_id} buildNumber={d.build_number} holds={holds} />
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'complete'}
        title={`Complete build ${d.build_number}?`}
        confirmLabel="Complete deployment"
        onClose={() => setAsking(null)}
        onConfirm={() => transition.mutateAsync({ action: 'complete' })}
      >
        <p>
          It stops offering build {d.build_number} ({d.version_label}) to devices that do not have it yet, at {d.rollout_percentage}% and at any later stage; {STOP_DETAIL} This is
          final: a completed deployment cannot be started again.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'cancel'}
        title={`Cancel the deployment of build ${d.build_number}?`}
        confirmLabel="Cancel deployment"
        danger
        typeToConfirm={`cancel build ${d.build_number}`}
        onClose={() => setAsking(null)}
        onConfirm={() => transition.mutateAsync({ action: 'cancel' })}
      >
        <p>
          No device is offered build {d.build_number} ({d.version_label}) by it again; {STOP_DETAIL} This is final: a cancelled deployment cannot be resumed.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** What a deployment without targets reaches, in the words of its confirmation. */
function ReachWords({ deployment: d, reach }: { deployment: Deployment; reach: number | undefined }) {
  return (
    <p>
      This deployment names no group and no channel, so it reaches <strong>{reach === undefined ? 'every device' : `all ${reach} devices`}</strong> of the project (at{' '}
      {d.rollout_percentage}%){reach === undefined ? ' (counting them…)' : ''}.
    </p>
  );
}
