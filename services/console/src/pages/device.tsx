import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { answer, api } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState, ShownOnce } from '../components/feedback';
import { Timestamp } from '../components/time';
import { MembershipEditor } from '../components/membership-editor';
import { NamedOptions } from '../components/named-options';
import { namesById, useChannels, useGroups } from '../queries';
import type { Decision, Device, DeviceEvent } from '../types';
import { CHECK_STATE_WORDS, checkStatusWords, reasonWords, statusWords } from '../words';
import { OtaStatus } from '../components/ota-status';
import { ReadOnlyNote, useProjectWrite } from '../project-access';
import { queryKeys } from '../query-keys';

type TimelineEntry = { at: string; key: string } & ({ kind: 'report'; report: DeviceEvent } | { kind: 'check'; decision: Decision });

/** The device's reports and its OTA decisions, merged, newest first. */
export function mergeTimeline(reports: DeviceEvent[], decisions: Decision[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    ...reports.map((report) => ({ at: report.created_at, key: `r-${report.id}`, kind: 'report' as const, report })),
    ...decisions.map((decision) => ({ at: decision.created_at, key: `c-${decision.id}`, kind: 'check' as const, decision })),
  ];
  return entries.sort((a, b) => b.at.localeCompare(a.at) || a.key.localeCompare(b.key));
}

export function DevicePage() {
  const { projectId = '', deviceId = '' } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const params = { path: { id: projectId, did: deviceId } };
  const device = useQuery({ queryKey: queryKeys.device(deviceId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/devices/{did}/', { params })), refetchInterval: 5_000 });
  const reports = useQuery({ queryKey: queryKeys.deviceEvents(deviceId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/devices/{did}/events/', { params })), refetchInterval: 5_000 });
  const decisions = useQuery({ queryKey: queryKeys.deviceChecks(deviceId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/devices/{did}/check-events/', { params })), refetchInterval: 5_000 });
  const channels = useChannels(projectId);
  const groups = useGroups(projectId);
  const [rawToken, setRawToken] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  // The channel chosen in the select; the device moves only once the move is confirmed.
  const [channelChoice, setChannelChoice] = useState('');
  const [asking, setAsking] = useState<'move' | 'deactivate' | 'rotate' | 'revoke-token' | null>(null);
  const [done, setDone] = useState('');
  const writable = useProjectWrite(projectId);
  const channelNames = namesById(channels.data);
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.device(deviceId) });
  const update = useMutation({ mutationFn: (body: Partial<Pick<Device, 'active' | 'channel_id'>>) => answer(api.PATCH('/api/v1/projects/{id}/devices/{did}/', { params, body })), onSuccess: refresh });
  const toldDone = (text: string) => () => setDone(text);
  const membership = useMutation({
    mutationFn: ({ groupId, member }: { groupId: string; member: boolean }) =>
      member
        ? answer(api.POST('/api/v1/projects/{id}/groups/{gid}/members/', { params: { path: { id: projectId, gid: groupId } }, body: { device_id: deviceId } }))
        : answer(api.DELETE('/api/v1/projects/{id}/groups/{gid}/members/{did}/', { params: { path: { id: projectId, gid: groupId, did: deviceId } } })),
    onSuccess: refresh,
  });
  const issueToken = useMutation({ mutationFn: () => answer(api.POST('/api/v1/projects/{id}/devices/{did}/token/', { params })), onSuccess: (issued) => setRawToken(issued.token) });
  const revokeToken = useMutation({ mutationFn: () => answer(api.DELETE('/api/v1/projects/{id}/devices/{did}/token/', { params })) });
  const chosenChannel = channelChoice || device.data?.channel_id || '';
  const groupNames = namesById(groups.data);

  if (device.error || !device.data) return <LoadState loading={device.isLoading} error={device.error}>{null}</LoadState>;
  const d = device.data;
  const timeline = mergeTimeline(reports.data ?? [], decisions.data ?? []);
  return (
    <>
      <p className="crumbs">
        <Link to={`/projects/${projectId}/devices`}>Devices</Link> /
      </p>
      <h1>{d.device_id}</h1>
      <dl className="facts">
        <dt>Hardware</dt>
        <dd>{[d.framework, d.chip_family, d.board_id, d.hardware_revision].filter(Boolean).join(' · ') || '—'}</dd>
        <dt>Partition, NVS, security</dt>
        <dd>{[d.partition_profile || 'any partition', d.nvs_schema_version === null ? 'NVS unknown' : `NVS ${d.nvs_schema_version}`, d.security_mode || 'security unknown'].join(' · ')}</dd>
        <dt>Build</dt>
        <dd>
          {d.current_build_number} <span className="muted">{d.current_version_label}</span>
        </dd>
        <dt>Binary SHA-256</dt>
        <dd className="hash">{d.current_hash || '—'}</dd>
        <dt>Last OTA status</dt>
        <dd>
          <OtaStatus status={d.last_ota_status} reason={d.last_ota_reason} />
        </dd>
        <dt>Last check</dt>
        <dd>
          {d.last_check_status ? checkStatusWords(d.last_check_status) : 'none'} · <Timestamp at={d.last_check_at} /> · {CHECK_STATE_WORDS[d.check_state]}
        </dd>
        <dt>Last seen</dt>
        <dd>
          <Timestamp at={d.last_seen} />
        </dd>
        <dt>Health</dt>
        <dd data-testid="device-health">{healthText(d.health)}</dd>
        <dt>Active</dt>
        <dd>{d.active ? 'yes' : 'no: refused updates (device_inactive)'}</dd>
      </dl>

      {writable ? (
        <section aria-labelledby="manage">
          <h2 id="manage">Manage</h2>
          {done && (
            <p className="ok" role="status" data-testid="device-done">
              {done}
            </p>
          )}
          <form
            className="inline"
            onSubmit={(event) => {
              event.preventDefault();
              if (chosenChannel !== d.channel_id) setAsking('move');
            }}
          >
            <label htmlFor="channel">Channel</label>
            {/* Choosing only chooses: arrow keys through the options move nothing until "Move…" is confirmed. */}
            <select id="channel" value={chosenChannel} onChange={(event) => setChannelChoice(event.target.value)}>
              <NamedOptions items={channels.data} />
            </select>
            <button type="submit" disabled={chosenChannel === d.channel_id}>
              Move…
            </button>
            <span className="muted">now on {channelNames.get(d.channel_id) ?? '…'}</span>
          </form>
          <div className="row">
            {d.active ? (
              <button type="button" className="danger" onClick={() => setAsking('deactivate')}>
                Deactivate…
              </button>
            ) : (
              <BusyButton type="button" busy={update.isPending} onClick={() => update.mutate({ active: true }, { onSuccess: toldDone(`${d.device_id} is active again: its next check may be offered updates.`) })}>
                Reactivate
              </BusyButton>
            )}
          </div>
          <ErrorNote error={update.error} />
          <h3>Groups</h3>
          <MembershipEditor
            layout="chips"
            members={d.group_ids.map((groupId) => ({ id: groupId, name: groupNames.get(groupId) ?? groupId }))}
            candidates={groups.data ?? []}
            empty="in no group"
            addLabel="Add to group"
            choose="choose a group"
            fieldId="add-group"
            removeLabel={(group) => `Remove from ${group.name}`}
            busy={membership.isPending}
            error={membership.error}
            onRemove={(groupId) => membership.mutate({ groupId, member: false })}
            onAdd={(groupId) => membership.mutateAsync({ groupId, member: true })}
          />
          <h3>Device token</h3>
          <p className="muted">A token of its own lets the device check without the fleet's project token. Issuing again rotates it: the old one stops at once.</p>
          <div className="row">
            <button type="button" onClick={() => setAsking('rotate')}>
              Issue or rotate token…
            </button>
            <button type="button" className="danger" onClick={() => setAsking('revoke-token')}>
              Revoke token…
            </button>
          </div>
          {rawToken && <ShownOnce label="The device's new token." secret={rawToken} onDismiss={() => setRawToken('')} />}
          <h3>Delete</h3>
          <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
            Delete device…
          </button>
        </section>
      ) : (
        <ReadOnlyNote projectId={projectId} />
      )}

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

      <ConfirmDialog
        open={asking === 'move'}
        title={`Move ${d.device_id} to ${channelNames.get(chosenChannel) ?? 'another channel'}?`}
        confirmLabel="Move device"
        onClose={() => setAsking(null)}
        onConfirm={() =>
          update.mutateAsync(
            { channel_id: chosenChannel },
            { onSuccess: toldDone(`Moved ${d.device_id} from ${channelNames.get(d.channel_id)} to ${channelNames.get(chosenChannel)}.`) },
          ).then(() => setChannelChoice(''))
        }
      >
        <p>
          From its next check on, it is offered what deployments to <strong>{channelNames.get(chosenChannel)}</strong> roll out, and no longer what those to{' '}
          <strong>{channelNames.get(d.channel_id)}</strong> do.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'deactivate'}
        title={`Deactivate ${d.device_id}?`}
        confirmLabel="Deactivate device"
        danger
        onClose={() => setAsking(null)}
        onConfirm={() => update.mutateAsync({ active: false }, { onSuccess: toldDone(`${d.device_id} is deactivated: its checks are answered device_inactive.`) })}
      >
        <p>Its checks are answered <code>device_inactive</code> and it is offered no update until it is reactivated. Its history stays.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'rotate'}
        title={`Issue a new token for ${d.device_id}?`}
        confirmLabel="Issue new token"
        onClose={() => setAsking(null)}
        onConfirm={() => issueToken.mutateAsync()}
      >
        <p>If it has a token already, that token stops working at once: the device gets 401 until it is given the new one, which is shown once.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'revoke-token'}
        title={`Revoke ${d.device_id}'s own token?`}
        confirmLabel="Revoke device token"
        danger
        onClose={() => setAsking(null)}
        onConfirm={() => revokeToken.mutateAsync().then(toldDone(`${d.device_id}'s own token is revoked.`))}
      >
        <p>The device's checks with that token get 401 from now on; it may check with the fleet's device-scope project token again.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${d.device_id}?`}
        confirmLabel="Delete device"
        danger
        onClose={() => setConfirmDelete(false)}
        onConfirm={async () => {
          await answer(api.DELETE('/api/v1/projects/{id}/devices/{did}/', { params }));
          await queryClient.invalidateQueries({ queryKey: queryKeys.devices(projectId) });
          void navigate(`/projects/${projectId}/devices`);
        }}
      >
        <p>Its history goes with it, and its place under the plan's device cap is freed. To keep the history, deactivate it instead.</p>
      </ConfirmDialog>
    </>
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
      {report.detail && <code className="detail">{JSON.stringify(report.detail)}</code>}
    </span>
  );
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

/** What the device's last check said of how it runs since it installed its build, in one line. */
function healthText(health: Device['health']): string {
  if (!health) return "not reported: the device's checks carry no health";
  const hours = Math.round((health.uptime_seconds / 3600) * 10) / 10;
  const heap = health.min_free_heap === null ? '' : ` · lowest free heap ${Math.round(health.min_free_heap / 1024)} KiB`;
  return `last reset: ${health.reset_reason} · ${health.boots} boot${health.boots === 1 ? '' : 's'} (${health.abnormal_boots} abnormal) and ${hours} h run on build ${health.build_number}${heap}`;
}
