import { useQuery } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { get } from '../api';
import { DataTable } from '../components/data-table';
import { LoadState } from '../components/feedback';
import { RelativeTime } from '../components/time';
import { NamedOptions } from '../components/named-options';
import { namesById, projectPath, useChannels, useGroups } from '../queries';
import type { Device } from '../types';

const column = createColumnHelper<Device>();

/** The device row of the spec: its failure `reason` verbatim beside the last OTA status. */
export function OtaStatus({ status, reason }: { status: string; reason: string }) {
  if (!status) return <span className="muted">none yet</span>;
  return (
    <span className={`status status-${status}`}>
      {status}
      {reason && <span className="reason"> ({reason})</span>}
    </span>
  );
}

export function DevicesPage() {
  const { projectId = '' } = useParams();
  const [active, setActive] = useState('');
  const [groupId, setGroupId] = useState('');
  const [channelId, setChannelId] = useState('');
  const [text, setText] = useState('');
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  const query = new URLSearchParams();
  if (active) query.set('active', active);
  if (groupId) query.set('group_id', groupId);
  if (channelId) query.set('channel_id', channelId);
  const devices = useQuery({
    queryKey: ['devices', projectId, query.toString()],
    queryFn: () => get<Device[]>(`${projectPath(projectId)}/devices/?${query}`),
    refetchInterval: 10_000,
  });
  const groupNames = namesById(groups.data);
  const channelNames = namesById(channels.data);
  const needle = text.trim().toLowerCase();
  const rows = useMemo(
    () =>
      (devices.data ?? []).filter(
        (device) =>
          !needle ||
          [device.device_id, device.board_id, device.chip_family, device.current_version_label, device.last_ota_reason, device.last_ota_status].some((value) =>
            value.toLowerCase().includes(needle),
          ),
      ),
    [devices.data, needle],
  );
  const columns = [
    column.accessor('device_id', {
      header: 'Device',
      cell: (info) => <Link to={`/projects/${projectId}/devices/${info.row.original.id}`}>{info.getValue()}</Link>,
    }),
    column.accessor((device) => [device.framework, device.chip_family, device.board_id, device.hardware_revision].filter(Boolean).join(' · '), { id: 'hardware', header: 'Hardware' }),
    column.accessor('current_build_number', {
      header: 'Build',
      cell: (info) => (
        <>
          {info.getValue()} <span className="muted">{info.row.original.current_version_label}</span>
        </>
      ),
    }),
    column.accessor('last_seen', { header: 'Last seen', cell: (info) => <RelativeTime at={info.getValue()} />, sortingFn: 'datetime' }),
    column.accessor('last_ota_status', { header: 'Last OTA status', cell: (info) => <OtaStatus status={info.getValue()} reason={info.row.original.last_ota_reason} /> }),
    column.accessor('last_check_status', { header: 'Last check', cell: (info) => info.getValue() || <span className="muted">none</span> }),
    column.accessor('check_state', { header: 'Check state' }),
    column.accessor((device) => channelNames.get(device.channel_id) ?? '', { id: 'channel', header: 'Channel' }),
    column.accessor((device) => device.group_ids.map((id) => groupNames.get(id) ?? id).join(', '), { id: 'groups', header: 'Groups' }),
    column.accessor('active', { header: 'Active', cell: (info) => (info.getValue() ? 'yes' : <strong>no</strong>) }),
  ];
  return (
    <>
      <h1>Devices</h1>
      <form className="filters" onSubmit={(event) => event.preventDefault()} aria-label="Filter devices">
        <label>
          Search
          <input type="search" value={text} onChange={(event) => setText(event.target.value)} placeholder="device id, board, version, reason" />
        </label>
        <label>
          Active
          <select value={active} onChange={(event) => setActive(event.target.value)}>
            <option value="">all</option>
            <option value="true">active</option>
            <option value="false">deactivated</option>
          </select>
        </label>
        <label>
          Group
          <select value={groupId} onChange={(event) => setGroupId(event.target.value)}>
            <option value="">any</option>
            <NamedOptions items={groups.data} />
          </select>
        </label>
        <label>
          Channel
          <select value={channelId} onChange={(event) => setChannelId(event.target.value)}>
            <option value="">any</option>
            <NamedOptions items={channels.data} />
          </select>
        </label>
      </form>
      <LoadState loading={devices.isLoading} error={devices.error} empty={rows.length === 0 && (devices.data?.length ? 'No device matches these filters.' : 'No devices yet: a device registers itself on its first check with a device-scope project token.')}>
        <DataTable rows={rows} columns={columns} caption="Devices" initialSort={[{ id: 'device_id', desc: false }]} />
      </LoadState>
    </>
  );
}
