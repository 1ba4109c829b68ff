import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { answer, api } from '../api';
import { DataTable } from '../components/data-table';
import { BusyButton, ErrorNote, LoadState } from '../components/feedback';
import { Timestamp } from '../components/time';
import { BuildHolds } from '../components/build-holds';
import { namesById, useArtifacts, useBuildHolds, useChannels, useGroups } from '../queries';
import { rolloutFigures } from '../rollout-figures';
import type { Deployment } from '../types';
import { RoleControls } from '../project-access';
import { queryKeys } from '../query-keys';
import { totalWords } from '../words';

const column = createColumnHelper<Deployment>();

export function DeploymentsPage() {
  const { projectId = '' } = useParams();
  const deployments = useQuery({
    queryKey: queryKeys.deployments(projectId),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/deployments/', { params: { path: { id: projectId } } })),
    refetchInterval: 5_000,
  });
  const groupNames = namesById(useGroups(projectId).data);
  const channelNames = namesById(useChannels(projectId).data);
  const columns = [
    column.accessor('created_at', {
      header: 'Created',
      cell: (info) => (
        <Link to={`/projects/${projectId}/deployments/${info.row.original.id}`}>
          <Timestamp at={info.getValue()} />
        </Link>
      ),
    }),
    column.accessor('build_number', { header: 'Build', cell: (info) => `${info.getValue()} (${info.row.original.version_label})` }),
    column.accessor('state', { header: 'State', cell: (info) => <span className={`state state-${info.getValue()}`}>{info.getValue()}</span> }),
    column.display({ id: 'targets', header: 'Targets', cell: (info) => <Targets deployment={info.row.original} groupNames={groupNames} channelNames={channelNames} /> }),
    column.accessor('rollout_percentage', { header: 'Rollout', cell: (info) => `${info.getValue()}%` }),
    column.display({ id: 'progress', header: 'Progress', cell: (info) => <ProgressCell deployment={info.row.original} /> }),
    column.accessor('failure_count', { header: 'Failures' }),
    column.accessor('notes', { header: 'Notes' }),
  ];
  return (
    <>
      <h1>Deployments</h1>
      <LoadState loading={deployments.isLoading} error={deployments.error} empty={deployments.data?.length === 0 && 'No deployments yet: create one from a build below.'}>
        <DataTable rows={deployments.data ?? []} columns={columns} caption="Deployments" initialSort={[{ id: 'created_at', desc: true }]} />
      </LoadState>
      <RoleControls projectId={projectId} what="Creating a deployment">
        <CreateDeployment projectId={projectId} />
      </RoleControls>
    </>
  );
}

/** Whom a deployment targets, by name: its groups and channels, or every device of the project. */
function Targets({ deployment: d, groupNames, channelNames }: { deployment: Deployment; groupNames: Map<string, string>; channelNames: Map<string, string> }) {
  const names = [
    ...d.target_group_ids.map((id) => `group ${groupNames.get(id) ?? '(deleted)'}`),
    ...d.target_channel_ids.map((id) => `channel ${channelNames.get(id) ?? '(deleted)'}`),
  ];
  return names.length === 0 ? <span className="muted">every device</span> : <span>{names.join(', ')}</span>;
}

/**
 * How far a deployment got, from the same summary as its own page (one request per row shown; a
 * row of a deployment that never started asks nothing).
 */
function ProgressCell({ deployment: d }: { deployment: Deployment }) {
  const ended = d.state === 'completed' || d.state === 'cancelled';
  const summary = useQuery({
    queryKey: queryKeys.summary(d.id),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/deployments/{did}/summary/', { params: { path: { id: d.project_id, did: d.id } } })),
    enabled: d.state !== 'draft',
    refetchInterval: ended ? false : 10_000,
  });
  if (d.state === 'draft') return <span className="muted">not started</span>;
  if (!summary.data) return <span className="muted">{summary.error ? 'unavailable' : '…'}</span>;
  const figures = rolloutFigures(summary.data);
  return (
    <span>
      {figures.confirmed} of {figures.total} updated
      {figures.failedDevices > 0 && <span className="danger-text"> · {figures.failedDevices} failed</span>}
    </span>
  );
}

function CreateDeployment({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const artifacts = useArtifacts(projectId);
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  const [artifactId, setArtifactId] = useState('');
  const [groupIds, setGroupIds] = useState<string[]>([]);
  const [channelIds, setChannelIds] = useState<string[]>([]);
  const [percentage, setPercentage] = useState(10);
  const [notes, setNotes] = useState('');
  const [protection, setProtection] = useState<ProtectionFields>(NO_PROTECTION);
  const [windowFields, setWindowFields] = useState<WindowFields>(NO_WINDOW);
  // The build whose raise of secure_version the person acknowledged: choosing another asks again.
  const [raiseAcknowledgedFor, setRaiseAcknowledgedFor] = useState('');
  const create = useMutation({
    mutationFn: () => {
      const { guardrails, stages, caps } = protectionOf(protection);
      const maintenanceWindows = maintenanceWindowsOf(windowFields);
      const body = {
        artifact_id: artifactId,
        target_group_ids: groupIds,
        target_channel_ids: channelIds,
        // A staged plan starts at its first stage's percentage.
        ...(stages ? { stages } : { rollout_percentage: percentage }),
        ...(guardrails ? { guardrails } : {}),
        ...(caps ? { caps } : {}),
        ...(maintenanceWindows ? { maintenance_windows: maintenanceWindows } : {}),
        ...(notes ? { notes } : {}),
        ...(raiseAcknowledgedFor === artifactId ? { acknowledge_secure_version_raise: true } : {}),
      };
      return answer(api.POST('/api/v1/projects/{id}/deployments/', { params: { path: { id: projectId } }, body }));
    },
    onSuccess: async (deployment) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.deployments(projectId) });
      void navigate(`/projects/${projectId}/deployments/${deployment.id}`);
    },
  });
  const toggle = (list: string[], id: string) => (list.includes(id) ? list.filter((other) => other !== id) : [...list, id]);
  // How many devices these targets reach now, before anything is created.
  const reachQuery = { ...(groupIds.length ? { group_ids: groupIds.join(',') } : {}), ...(channelIds.length ? { channel_ids: channelIds.join(',') } : {}) };
  const reach = useQuery({
    queryKey: queryKeys.reach(projectId, reachQuery),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/reach/', { params: { path: { id: projectId }, query: reachQuery } })),
    placeholderData: (previous) => previous,
  });
  const planned = stagesOf(protection.stages);
  const usable = (artifacts.data ?? []).filter((artifact) => !artifact.archived).sort((a, b) => b.build_number - a.build_number);
  const chosen = usable.find((artifact) => artifact.id === artifactId);
  const raise = chosen?.secure_version_raise ?? null;
  // A build another deployment holds back: the draft may be made, but its start needs an approver.
  const holds = useBuildHolds(projectId, artifactId).data ?? [];
  return (
    <section aria-labelledby="new-deployment">
      <h2 id="new-deployment">New deployment</h2>
      <p className="muted">Created as a draft: start it from its page. Targets are fixed once created; with no group and no channel it reaches every device.</p>
      <form
        className="grid"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <label className="wide">
          Build
          <select required value={artifactId} onChange={(event) => setArtifactId(event.target.value)}>
            <option value="">choose a build</option>
            {usable.map((artifact) => (
              <option key={artifact.id} value={artifact.id}>
                {artifact.build_number}: {artifact.version_label} ({artifact.framework}, {artifact.chip_family}
                {artifact.board_id ? `, ${artifact.board_id}` : ''})
                {artifact.secure_version_raise ? ` · raises secure_version to ${artifact.secure_version_raise.to}` : ''}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Groups (any of them)</legend>
          {groups.data?.length === 0 && <p className="muted">No groups.</p>}
          {groups.data?.map((group) => (
            <label key={group.id} className="check">
              <input type="checkbox" checked={groupIds.includes(group.id)} onChange={() => setGroupIds(toggle(groupIds, group.id))} /> {group.name}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Channels (any of them)</legend>
          {channels.data?.map((channel) => (
            <label key={channel.id} className="check">
              <input type="checkbox" checked={channelIds.includes(channel.id)} onChange={() => setChannelIds(toggle(channelIds, channel.id))} /> {channel.name}
              {channel.is_default && <span className="muted"> (default)</span>}
            </label>
          ))}
        </fieldset>
        <p className="wide" data-testid="reach" role="status">
          {reach.data
            ? `These targets reach ${totalWords({ count: reach.data.devices, estimated: reach.data.estimated })} device${reach.data.devices === 1 ? '' : 's'} now${groupIds.length + channelIds.length === 0 ? ': every device of the project' : ''}.`
            : 'Counting the devices these targets reach…'}
        </p>
        {raise && (
          <fieldset className="wide danger-zone" data-testid="secure-version-raise">
            <legend>This build raises secure_version, for good</legend>
            <p>
              Its image raises the anti-rollback version from {raise.from} to <strong>{raise.to}</strong>. Each device that confirms it burns eFuse
              bits and can never again run a build below {raise.to}: up to{' '}
              <strong>{reach.data ? totalWords({ count: reach.data.devices, estimated: reach.data.estimated }) : 'every'} device{reach.data?.devices === 1 ? '' : 's'}</strong> these targets
              reach now, and the chip keeps <strong>{raise.efuse_bits_left}</strong> more such raise{raise.efuse_bits_left === 1 ? '' : 's'}. It needs the approver role.
            </p>
            <label className="check">
              <input type="checkbox" required checked={raiseAcknowledgedFor === artifactId} onChange={(event) => setRaiseAcknowledgedFor(event.target.checked ? artifactId : '')} /> I
              understand that this cannot be undone
            </label>
          </fieldset>
        )}
        {holds.length > 0 && (
          <div className="wide danger-zone">
            <BuildHolds projectId={projectId} buildNumber={chosen?.build_number} holds={holds} testId="build-holds" />
          </div>
        )}
        {planned.length > 0 ? (
          // A staged plan starts at its first stage: a separate percentage would be ignored, so it is not asked.
          <p data-testid="starts-at">
            Starts at the first stage: <strong>{planned[0]}%</strong>
          </p>
        ) : (
          <label>
            Rollout percentage
            <input type="number" min={0} max={100} step={1} required value={percentage} onChange={(event) => setPercentage(Number(event.target.value))} />
          </label>
        )}
        <label>
          Notes <input value={notes} maxLength={500} onChange={(event) => setNotes(event.target.value)} />
        </label>
        <ProtectionFieldset value={protection} onChange={setProtection} />
        <WindowFieldset value={windowFields} onChange={setWindowFields} />
        <div className="wide">
          <BusyButton type="submit" className="primary" busy={create.isPending}>
            Create draft
          </BusyButton>
        </div>
      </form>
      <ErrorNote error={create.error ?? artifacts.error} />
    </section>
  );
}

/** The optional guardrails and staged plan, as typed into the form (blank: not used). */
interface ProtectionFields {
  thresholdPercent: string;
  thresholdMinFinished: string;
  reason: string;
  reasonCount: string;
  reasonWindowSeconds: string;
  confirmTimeoutSeconds: string;
  /** Watch how updated devices run against those not yet updated (health_regression). */
  watchHealth: boolean;
  healthMarginPercent: string;
  healthSignificance: string;
  healthMinDevices: string;
  healthMinDeviceHours: string;
  offersPerMinute: string;
  maxInProgress: string;
  stages: string;
  stageWaitMinutes: string;
  stageApproval: boolean;
}

const NO_PROTECTION: ProtectionFields = {
  thresholdPercent: '',
  thresholdMinFinished: '',
  reason: 'signature_invalid',
  reasonCount: '',
  reasonWindowSeconds: '600',
  confirmTimeoutSeconds: '',
  watchHealth: false,
  // The API's defaults, shown so that a person sees what they accept.
  healthMarginPercent: '50',
  healthSignificance: '0.001',
  healthMinDevices: '20',
  healthMinDeviceHours: '50',
  offersPerMinute: '',
  maxInProgress: '',
  stages: '',
  stageWaitMinutes: '60',
  stageApproval: false,
};

/** The stage percentages typed, in order. */
function stagesOf(text: string): number[] {
  return text.split(',').map((part) => part.trim()).filter(Boolean).map(Number);
}

/** The health guardrail's settings typed; a blank one takes the API's default. */
function healthRegressionOf(fields: ProtectionFields) {
  return {
    ...(fields.healthMarginPercent ? { margin_percent: Number(fields.healthMarginPercent) } : {}),
    ...(fields.healthSignificance ? { significance: Number(fields.healthSignificance) } : {}),
    ...(fields.healthMinDevices ? { min_devices: Number(fields.healthMinDevices) } : {}),
    ...(fields.healthMinDeviceHours ? { min_device_hours: Number(fields.healthMinDeviceHours) } : {}),
  };
}

/** The API's `guardrails` and `stages` from the form; each is left out when its fields are blank. The API checks the numbers. */
function protectionOf(fields: ProtectionFields) {
  const guardrails = {
    ...(fields.thresholdPercent ? { failure_threshold: { percent: Number(fields.thresholdPercent), min_finished: Number(fields.thresholdMinFinished || 0) } } : {}),
    ...(fields.reasonCount ? { reason_limits: [{ reason: fields.reason, count: Number(fields.reasonCount), window_seconds: Number(fields.reasonWindowSeconds) }] } : {}),
    ...(fields.confirmTimeoutSeconds ? { confirm_timeout_seconds: Number(fields.confirmTimeoutSeconds) } : {}),
    ...(fields.watchHealth ? { health_regression: healthRegressionOf(fields) } : {}),
  };
  const stages = stagesOf(fields.stages).map((percentage, index) => ({
    percentage,
    min_wait_seconds: Math.round(Number(fields.stageWaitMinutes || 0) * 60),
    approval_required: index > 0 && fields.stageApproval,
  }));
  const caps = {
    ...(fields.offersPerMinute ? { offers_per_minute: Number(fields.offersPerMinute) } : {}),
    ...(fields.maxInProgress ? { max_in_progress: Number(fields.maxInProgress) } : {}),
  };
  return {
    guardrails: Object.keys(guardrails).length > 0 ? guardrails : undefined,
    stages: stages.length > 0 ? stages : undefined,
    caps: Object.keys(caps).length > 0 ? caps : undefined,
  };
}

function ProtectionFieldset({ value, onChange }: { value: ProtectionFields; onChange: (value: ProtectionFields) => void }) {
  const field = (key: keyof ProtectionFields) => ({
    value: value[key] as string,
    onChange: (event: { target: { value: string } }) => onChange({ ...value, [key]: event.target.value }),
  });
  return (
    <details className="wide">
      <summary>Guardrails, caps and staged plan (optional)</summary>
      <fieldset className="field-grid">
        <legend>Pause by itself when</legend>
        <label>
          Failed share reaches (%)
          <input type="number" min={1} max={100} step={1} required={value.thresholdMinFinished !== ''} {...field('thresholdPercent')} />
        </label>
        <label>
          once this many devices finished
          {/* Both or neither: the browser asks for the other before anything is sent. */}
          <input type="number" min={1} step={1} required={value.thresholdPercent !== ''} {...field('thresholdMinFinished')} />
        </label>
        <label>
          Failures with reason
          <input {...field('reason')} />
        </label>
        <label>
          reach this many
          <input type="number" min={1} step={1} {...field('reasonCount')} />
        </label>
        <label>
          within (seconds)
          <input type="number" min={1} step={1} {...field('reasonWindowSeconds')} />
        </label>
        <label className="wide">
          Count a device as failed after this many seconds of silence after progress
          <input type="number" min={1} step={1} {...field('confirmTimeoutSeconds')} />
        </label>
        <label className="check wide">
          <input type="checkbox" checked={value.watchHealth} aria-describedby="health-note" onChange={(event) => onChange({ ...value, watchHealth: event.target.checked })} /> Updated devices crash
          (panic, watchdog, brownout) more often than those not yet updated
        </label>
        {value.watchHealth && (
          <>
            <label>
              by more than (%)
              <input type="number" min={0} max={1000} step={1} {...field('healthMarginPercent')} />
            </label>
            <label>
              at a significance of
              <input type="number" min={0.000001} max={0.1} step="any" {...field('healthSignificance')} />
            </label>
            <label>
              once each side has devices
              <input type="number" min={1} step={1} {...field('healthMinDevices')} />
            </label>
            <label>
              and device-hours
              <input type="number" min={1} step="any" {...field('healthMinDeviceHours')} />
            </label>
          </>
        )}
        <p id="health-note" className="muted small-text wide">
          Judged from the health devices report with their checks (resets after a panic, a watchdog or a brownout, per hour run), the build&apos;s devices against those not yet updated.
        </p>
      </fieldset>
      <fieldset className="field-grid">
        <legend>Start updates no faster than</legend>
        <label>
          New offers a minute
          <input type="number" min={1} max={100000} step={1} {...field('offersPerMinute')} />
        </label>
        <label>
          Devices updating at once
          <input type="number" min={1} step={1} {...field('maxInProgress')} />
        </label>
        <p className="muted small-text wide">Blank: no cap. A device held back checks again after the minute; one already offered keeps its offer.</p>
      </fieldset>
      <fieldset className="field-grid">
        <legend>Staged plan</legend>
        <label>
          Stages (percentages, comma-separated)
          <input placeholder="10, 50, 100" aria-describedby="stages-note" {...field('stages')} />
        </label>
        <p id="stages-note" className="muted small-text">
          The deployment starts at the first stage; the rollout percentage is then not asked.
        </p>
        <label>
          Minutes at each stage before the next
          <input type="number" min={0} step={1} {...field('stageWaitMinutes')} />
        </label>
        <label className="check wide">
          <input type="checkbox" checked={value.stageApproval} onChange={(event) => onChange({ ...value, stageApproval: event.target.checked })} /> Wait for a person&apos;s ramp before each next stage
        </label>
      </fieldset>
    </details>
  );
}

const DAYS = [
  ['mon', 'Mon'],
  ['tue', 'Tue'],
  ['wed', 'Wed'],
  ['thu', 'Thu'],
  ['fri', 'Fri'],
  ['sat', 'Sat'],
  ['sun', 'Sun'],
] as const;
type Day = (typeof DAYS)[number][0];

/** The most windows a schedule holds (the API's limit). */
const MAX_WINDOWS = 20;

/** One weekly maintenance window, as typed into the form (no day ticked: left out). */
interface WindowRow {
  days: Day[];
  start: string;
  hours: string;
}

/** The form's schedule: up to MAX_WINDOWS windows in one zone. */
interface WindowFields {
  rows: WindowRow[];
  timeZone: string;
  inDeviceLocalTime: boolean;
}

const EMPTY_ROW: WindowRow = { days: [], start: '02:00', hours: '2' };

const NO_WINDOW: WindowFields = {
  rows: [EMPTY_ROW],
  // The person's own zone is the likeliest they think in; the API refuses one it does not know.
  timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  inDeviceLocalTime: false,
};

/** The API's `maintenance_windows`, or none when no window has a day ticked. */
function maintenanceWindowsOf(fields: WindowFields) {
  const rows = fields.rows.filter((row) => row.days.length > 0);
  if (rows.length === 0) return undefined;
  return {
    time_zone: fields.timeZone,
    in_device_local_time: fields.inDeviceLocalTime,
    windows: rows.map((row) => ({ days: row.days, start: row.start, duration_minutes: Math.round(Number(row.hours || 0) * 60) })),
  };
}

function WindowFieldset({ value, onChange }: { value: WindowFields; onChange: (value: WindowFields) => void }) {
  const anyDay = value.rows.some((row) => row.days.length > 0);
  const setRow = (index: number, row: WindowRow) => onChange({ ...value, rows: value.rows.map((other, at) => (at === index ? row : other)) });
  return (
    <details className="wide">
      <summary>Maintenance windows (optional)</summary>
      <fieldset className="field-grid">
        <legend>Offer the build only</legend>
        {value.rows.map((row, index) => {
          // The first window's labels read as they always have; the others name their number.
          const named = (label: string) => (index === 0 ? label : `${label}, window ${index + 1}`);
          const toggle = (day: Day) => setRow(index, { ...row, days: row.days.includes(day) ? row.days.filter((other) => other !== day) : [...row.days, day] });
          return (
            <div className="wide field-grid" key={index}>
              <div className="wide row" role="group" aria-label={index === 0 ? 'On these days' : `Window ${index + 1}: on these days`}>
                {DAYS.map(([day, label]) => (
                  <label key={day} className="check">
                    <input type="checkbox" checked={row.days.includes(day)} onChange={() => toggle(day)} /> {label}
                  </label>
                ))}
              </div>
              <label>
                {named('from (local time)')}
                <input type="time" required={row.days.length > 0} value={row.start} onChange={(event) => setRow(index, { ...row, start: event.target.value })} />
              </label>
              <label>
                {named('for (hours)')}
                <input type="number" min={0.25} max={168} step={0.25} required={row.days.length > 0} value={row.hours} onChange={(event) => setRow(index, { ...row, hours: event.target.value })} />
              </label>
              {index > 0 && (
                <button type="button" onClick={() => onChange({ ...value, rows: value.rows.filter((_, at) => at !== index) })}>
                  Remove window {index + 1}
                </button>
              )}
            </div>
          );
        })}
        <p className="wide">
          <button type="button" disabled={value.rows.length >= MAX_WINDOWS} onClick={() => onChange({ ...value, rows: [...value.rows, EMPTY_ROW] })}>
            Add a window
          </button>{' '}
          <span className="muted small-text">{value.rows.length >= MAX_WINDOWS ? `${MAX_WINDOWS} windows is the most a deployment holds` : `up to ${MAX_WINDOWS}`}</span>
        </p>
        <label>
          in the time zone
          <input value={value.timeZone} required={anyDay} aria-describedby="window-note" onChange={(event) => onChange({ ...value, timeZone: event.target.value })} />
        </label>
        <label className="check wide">
          <input type="checkbox" checked={value.inDeviceLocalTime} onChange={(event) => onChange({ ...value, inDeviceLocalTime: event.target.checked })} /> in each device&apos;s own local time, where it reports its offset
        </label>
        <p id="window-note" className="muted small-text wide">
          No day ticked: offered at any time. Outside the windows a device is told when the next opens. The zone is an IANA name (Europe/Berlin, UTC).
        </p>
      </fieldset>
    </details>
  );
}
