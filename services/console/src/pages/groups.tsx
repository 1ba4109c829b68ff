import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { del, get, post } from '../api';
import { BusyButton, ErrorNote, LoadState } from '../components/feedback';
import { RelativeTime } from '../components/time';
import { projectPath, useChannels, useGroups } from '../queries';
import type { Device } from '../types';
import { InlineForm } from '../components/inline-form';
import { MembershipEditor } from '../components/membership-editor';

/** A one-field create form for a group or a channel. The name stays in the field until it is created, so that a refused one can be corrected. */
function CreateNamed({ noun, onCreate, pending, error }: { noun: 'group' | 'channel'; onCreate: (name: string, options: { onSuccess: () => void }) => void; pending: boolean; error: unknown }) {
  const [name, setName] = useState('');
  const id = `new-${noun}`;
  return (
    <>
      <InlineForm
        onSubmit={() => onCreate(name, { onSuccess: () => setName('') })}
      >
        <label htmlFor={id}>New {noun}</label>
        <input id={id} required pattern="[A-Za-z0-9._\-]{1,64}" title="1 to 64 letters, digits, dots, dashes or underscores" value={name} onChange={(event) => setName(event.target.value)} />
        <BusyButton type="submit" busy={pending} aria-label={`Create ${noun}`}>
          Create
        </BusyButton>
      </InlineForm>
      <ErrorNote error={error} />
    </>
  );
}

export function GroupsAndChannelsPage() {
  const { projectId = '' } = useParams();
  const queryClient = useQueryClient();
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  const createGroup = useMutation({
    mutationFn: (name: string) => post(`${projectPath(projectId)}/groups/`, { name }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['groups', projectId] }),
  });
  const createChannel = useMutation({
    mutationFn: (name: string) => post(`${projectPath(projectId)}/channels/`, { name }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['channels', projectId] }),
  });
  return (
    <>
      <h1>Groups and channels</h1>
      <div className="columns">
        <section aria-labelledby="groups">
          <h2 id="groups">Groups</h2>
          <p className="muted">A device may be in many groups; deployments can target them (a canary group, say).</p>
          <LoadState loading={groups.isLoading} error={groups.error} empty={groups.data?.length === 0 && 'No groups yet.'}>
            <ul className="plain">
              {groups.data?.map((group) => (
                <li key={group.id}>
                  <Link to={`/projects/${projectId}/groups/${group.id}`}>{group.name}</Link> <span className="muted">created <RelativeTime at={group.created_at} /></span>
                </li>
              ))}
            </ul>
          </LoadState>
          <CreateNamed noun="group" onCreate={(name, options) => createGroup.mutate(name, options)} pending={createGroup.isPending} error={createGroup.error} />
        </section>
        <section aria-labelledby="channels">
          <h2 id="channels">Channels</h2>
          <p className="muted">Every device is on one channel; new devices land on the default one. Move a device from its page.</p>
          <LoadState loading={channels.isLoading} error={channels.error}>
            <ul className="plain">
              {channels.data?.map((channel) => (
                <li key={channel.id}>
                  {channel.name} {channel.is_default && <span className="tag">default</span>}{' '}
                  <Link to={`/projects/${projectId}/devices`} className="muted">
                    devices
                  </Link>
                </li>
              ))}
            </ul>
          </LoadState>
          <CreateNamed noun="channel" onCreate={(name, options) => createChannel.mutate(name, options)} pending={createChannel.isPending} error={createChannel.error} />
        </section>
      </div>
    </>
  );
}

export function GroupPage() {
  const { projectId = '', groupId = '' } = useParams();
  const queryClient = useQueryClient();
  const groups = useGroups(projectId);
  const group = groups.data?.find((candidate) => candidate.id === groupId);
  const membersPath = `${projectPath(projectId)}/groups/${groupId}/members/`;
  const members = useQuery({ queryKey: ['members', groupId], queryFn: () => get<Device[]>(membersPath) });
  const devices = useQuery({ queryKey: ['devices', projectId, ''], queryFn: () => get<Device[]>(`${projectPath(projectId)}/devices/?`) });
  const change = useMutation({
    mutationFn: ({ deviceId, member }: { deviceId: string; member: boolean }) => (member ? post(membersPath, { device_id: deviceId }) : del(`${membersPath}${deviceId}/`)),
    onSuccess: () =>
      Promise.all([queryClient.invalidateQueries({ queryKey: ['members', groupId] }), queryClient.invalidateQueries({ queryKey: ['devices', projectId] })]),
  });
  return (
    <>
      <p className="crumbs">
        <Link to={`/projects/${projectId}/groups`}>Groups and channels</Link> /
      </p>
      <h1>Group {group?.name ?? '…'}</h1>
      <ErrorNote error={groups.error} />
      <LoadState loading={members.isLoading} error={members.error}>
        <MembershipEditor
          layout="list"
          members={(members.data ?? []).map((device) => ({ id: device.id, name: device.device_id, label: <Link to={`/projects/${projectId}/devices/${device.id}`}>{device.device_id}</Link> }))}
          candidates={(devices.data ?? []).map((device) => ({ id: device.id, name: device.device_id }))}
          empty="No members yet."
          addLabel="Add a device"
          choose="choose a device"
          fieldId="add-member"
          removeLabel={(device) => `Remove ${device.name}`}
          busy={change.isPending}
          error={change.error ?? devices.error}
          onRemove={(deviceId) => change.mutate({ deviceId, member: false })}
          onAdd={(deviceId) => change.mutateAsync({ deviceId, member: true })}
        />
      </LoadState>
    </>
  );
}
