import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation, useParams, useSearchParams } from 'react-router-dom';
import type { operations } from '../../generated/api';
import { ApiError, answer, answerWithHeaders, api } from '../api';
import { BusyButton, ErrorNote, LoadState } from '../components/feedback';
import { NamedOptions } from '../components/named-options';
import { PlainTable } from '../components/plain-table';
import { Timestamp } from '../components/time';
import { namesById, useChannels, useGroups } from '../queries';
import type { Device } from '../types';
import { CHECK_STATE_WORDS, checkStatusWords, reasonWords, statusWords } from '../words';
import { useProjectWrite } from './projects';
import { queryKeys } from '../query-keys';

type DeviceQuery = NonNullable<operations['listDevices']['parameters']['query']>;

export const DEVICE_PAGE_SIZE = 50;
/** The most devices the API takes in one bulk membership change, and the largest page it serves. */
const BULK_CHUNK = 1000;

/** The device row: its failure `reason` beside the last OTA status, in words. */
export function OtaStatus({ status, reason }: { status: string; reason: string }) {
  if (!status) return <span className="muted">none yet</span>;
  return (
    <span className={`status status-${status}`}>
      {statusWords(status)}
      {reason && (
        <span className="reason" title={reason}>
          {' '}
          ({reasonWords(reason)})
        </span>
      )}
    </span>
  );
}

/**
 * The device list's filters, as the URL holds them (so a reload or a shared link keeps them). The
 * fields show the URL's values, so leaving the filters by a link clears the fields too.
 */
const FILTERS = ['q', 'active', 'group_id', 'channel_id', 'chip_family'] as const;

/** One page of devices, read from the server, with every match counted. */
export async function devicePage(projectId: string, filters: URLSearchParams, after: string, limit = DEVICE_PAGE_SIZE): Promise<{ devices: Device[]; total: number }> {
  const query: Record<string, string> = { limit: String(limit) };
  if (after) query.after = after;
  for (const key of FILTERS) if (filters.get(key)) query[key] = filters.get(key)!;
  // The filters come from the URL as typed; the API answers a value it does not take with its own detail.
  const page = await answerWithHeaders(api.GET('/api/v1/projects/{id}/devices/', { params: { path: { id: projectId }, query: query as DeviceQuery } }));
  return { devices: page.body, total: Number(page.headers.get('x-total-count') ?? 0) };
}

export function DevicesPage() {
  const { projectId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const writable = useProjectWrite(projectId);
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  // The cursors of the pages before this one, so that Previous goes back exactly. They live in the
  // history entry of the page, so that the browser's Back and Forward bring their own along.
  const location = useLocation();
  const earlier = (location.state as { earlier?: string[] } | null)?.earlier ?? [];
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const after = params.get('after') ?? '';
  const filterKey = FILTERS.map((key) => params.get(key) ?? '').join('|');
  const page = useQuery({
    queryKey: queryKeys.devicePage(projectId, filterKey, after),
    queryFn: () => devicePage(projectId, params, after),
    refetchInterval: 10_000,
    placeholderData: (previous) => previous,
  });
  const setFilter = (key: (typeof FILTERS)[number], value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete('after');
    setSelected(new Set());
    setParams(next, { replace: true, state: { earlier: [] } });
  };
  const goTo = (cursor: string, history: string[]) => {
    const next = new URLSearchParams(params);
    if (cursor) next.set('after', cursor);
    else next.delete('after');
    setParams(next, { state: { earlier: history } });
  };
  const devices = page.data?.devices ?? [];
  const total = page.data?.total ?? 0;
  // The position of this page is known when it was reached by paging here; a cursor that came in
  // the URL (a reload, a shared link) says only where the page starts.
  const firstIndex = after && earlier.length === 0 ? undefined : earlier.length * DEVICE_PAGE_SIZE;
  const hasNext = firstIndex === undefined ? devices.length === DEVICE_PAGE_SIZE : firstIndex + devices.length < total;
  const groupNames = namesById(groups.data);
  const channelNames = namesById(channels.data);
  const filtered = FILTERS.some((key) => params.get(key));
  const allOnPage = devices.length > 0 && devices.every((device) => selected.has(device.id));
  return (
    <>
      <h1>Devices</h1>
      <form className="filters" onSubmit={(event) => event.preventDefault()} aria-label="Filter devices">
        <label>
          Search
          <input type="search" value={params.get('q') ?? ''} onChange={(event) => setFilter('q', event.target.value.trim())} placeholder="device id contains…" />
        </label>
        <label>
          Active
          <select value={params.get('active') ?? ''} onChange={(event) => setFilter('active', event.target.value)}>
            <option value="">all</option>
            <option value="true">active</option>
            <option value="false">deactivated</option>
          </select>
        </label>
        <label>
          Group
          <select value={params.get('group_id') ?? ''} onChange={(event) => setFilter('group_id', event.target.value)}>
            <option value="">any</option>
            <NamedOptions items={groups.data} />
          </select>
        </label>
        <label>
          Channel
          <select value={params.get('channel_id') ?? ''} onChange={(event) => setFilter('channel_id', event.target.value)}>
            <option value="">any</option>
            <NamedOptions items={channels.data} />
          </select>
        </label>
        <label>
          Chip family
          <input value={params.get('chip_family') ?? ''} onChange={(event) => setFilter('chip_family', event.target.value.trim())} placeholder="esp32s3" />
        </label>
      </form>
      {writable && (
        <BulkMembership projectId={projectId} selected={selected} total={total} filters={params} filtered={filtered} onDone={() => setSelected(new Set())} />
      )}
      <LoadState
        loading={page.isLoading}
        error={page.error}
        empty={devices.length === 0 && (filtered ? 'No device matches these filters.' : 'No devices yet: a device registers itself on its first check with a device-scope project token.')}
      >
        <p className="muted" data-testid="device-count" role="status">
          {total === 0
            ? 'No devices'
            : firstIndex === undefined
              ? `${devices.length} devices after ${after}, of ${total}`
              : `Devices ${firstIndex + 1}–${firstIndex + devices.length} of ${total}`}
          {filtered ? ' matching the filters' : ''}
        </p>
        <PlainTable
          caption="Devices"
          headers={[writable ? 'Select' : '', 'Device', 'Hardware', 'Build', 'Last seen', 'Last OTA status', 'Last check', 'Channel', 'Groups', 'Active'].filter(Boolean)}
        >
          {writable && (
            <tr className="select-all">
              <td colSpan={10}>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={allOnPage}
                    onChange={() => setSelected(allOnPage ? new Set([...selected].filter((id) => !devices.some((device) => device.id === id))) : new Set([...selected, ...devices.map((device) => device.id)]))}
                  />{' '}
                  Select the {devices.length} devices on this page
                </label>
              </td>
            </tr>
          )}
          {devices.map((device) => (
            <tr key={device.id}>
              {writable && (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${device.device_id}`}
                    checked={selected.has(device.id)}
                    onChange={() => {
                      const next = new Set(selected);
                      if (next.has(device.id)) next.delete(device.id);
                      else next.add(device.id);
                      setSelected(next);
                    }}
                  />
                </td>
              )}
              <td className="nowrap">
                <Link to={`/projects/${projectId}/devices/${device.id}`}>{device.device_id}</Link>
              </td>
              <td>{[device.framework, device.chip_family, device.board_id, device.hardware_revision].filter(Boolean).join(' · ')}</td>
              <td>
                {device.current_build_number} <span className="muted">{device.current_version_label}</span>
              </td>
              <td>
                <Timestamp at={device.last_seen} />
              </td>
              <td>
                <OtaStatus status={device.last_ota_status} reason={device.last_ota_reason} />
              </td>
              <td>
                {device.last_check_status ? checkStatusWords(device.last_check_status) : <span className="muted">none</span>}
                <div className="muted small-text">{CHECK_STATE_WORDS[device.check_state]}</div>
              </td>
              <td>{channelNames.get(device.channel_id) ?? ''}</td>
              <td>{device.group_ids.map((id) => groupNames.get(id) ?? id).join(', ')}</td>
              <td>{device.active ? 'yes' : <strong>no</strong>}</td>
            </tr>
          ))}
        </PlainTable>
        <nav className="pager" aria-label="Device pages">
          <button type="button" disabled={!after} onClick={() => goTo(earlier.at(-1) ?? '', earlier.slice(0, -1))}>
            Previous
          </button>
          <button type="button" disabled={!hasNext} onClick={() => goTo(devices.at(-1)!.device_id, [...earlier, after])}>
            Next
          </button>
        </nav>
      </LoadState>
    </>
  );
}

/**
 * Adds the selected devices to a group, or removes them, in one request per 1000; or every device
 * that matches the filters, read page by page first. Progress is shown as it goes.
 */
function BulkMembership({ projectId, selected, total, filters, filtered, onDone }: { projectId: string; selected: Set<string>; total: number; filters: URLSearchParams; filtered: boolean; onDone: () => void }) {
  const queryClient = useQueryClient();
  const groups = useGroups(projectId);
  const [groupId, setGroupId] = useState('');
  const [scope, setScope] = useState<'selected' | 'matching'>('selected');
  const [progress, setProgress] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const count = scope === 'selected' ? selected.size : total;
  const run = async (change: 'add' | 'remove') => {
    setBusy(true);
    setError(null);
    try {
      let ids = [...selected];
      if (scope === 'matching') {
        ids = [];
        let after = '';
        for (;;) {
          setProgress(`Reading the matching devices: ${ids.length} of ${total}…`);
          const next = await devicePage(projectId, filters, after, BULK_CHUNK);
          ids.push(...next.devices.map((device) => device.id));
          if (next.devices.length < BULK_CHUNK) break;
          after = next.devices.at(-1)!.device_id;
        }
      }
      let changed = 0;
      for (let start = 0; start < ids.length; start += BULK_CHUNK) {
        setProgress(`${change === 'add' ? 'Adding' : 'Removing'}: ${start} of ${ids.length}…`);
        const body = { [change]: ids.slice(start, start + BULK_CHUNK) };
        const counts = await answer(api.POST('/api/v1/projects/{id}/groups/{gid}/members/changes/', { params: { path: { id: projectId, gid: groupId } }, body }));
        changed += change === 'add' ? counts.added : counts.removed;
      }
      const groupName = groups.data?.find((group) => group.id === groupId)?.name ?? 'the group';
      setProgress(`${change === 'add' ? `Added ${changed} devices to` : `Removed ${changed} devices from`} ${groupName}.`);
      onDone();
      await Promise.all([queryClient.invalidateQueries({ queryKey: queryKeys.devices(projectId) }), queryClient.invalidateQueries({ queryKey: queryKeys.groups(projectId) })]);
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
      setProgress('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline bulk" aria-label="Group membership of many devices" onSubmit={(event) => event.preventDefault()}>
      <label>
        <select aria-label="Which devices" value={scope} onChange={(event) => setScope(event.target.value as 'selected' | 'matching')}>
          <option value="selected">the {selected.size} selected devices</option>
          <option value="matching">all {total} devices {filtered ? 'matching the filters' : 'of the project'}</option>
        </select>
      </label>
      <label>
        Group
        <select aria-label="Group to change" value={groupId} onChange={(event) => setGroupId(event.target.value)}>
          <option value="">choose a group</option>
          <NamedOptions items={groups.data} />
        </select>
      </label>
      <BusyButton type="button" busy={busy} disabled={!groupId || count === 0} onClick={() => void run('add')}>
        Add to group
      </BusyButton>
      <BusyButton type="button" busy={busy} disabled={!groupId || count === 0} onClick={() => void run('remove')}>
        Remove from group
      </BusyButton>
      {progress && (
        <span role="status" data-testid="bulk-progress">
          {progress}
        </span>
      )}
      <ErrorNote error={error} />
    </form>
  );
}

/** Reads a single device; used where only its name is needed (an audit line). */
export function useDevice(projectId: string, id: string, enabled = true) {
  return useQuery({ queryKey: queryKeys.device(id), queryFn: () => answer(api.GET('/api/v1/projects/{id}/devices/{did}/', { params: { path: { id: projectId, did: id } } })), enabled, retry: false, staleTime: 60_000 });
}
