import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { answer, api } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState } from '../components/feedback';
import { InlineForm } from '../components/inline-form';
import { Timestamp } from '../components/time';
import { useChannels, useGroups } from '../queries';
import type { Channel, Group } from '../types';
import { devicePage } from '../device-pages';
import { ReadOnlyNote, RoleFieldset } from '../project-access';
import { queryKeys } from '../query-keys';
import { totalWords } from '../words';

const NAME_PATTERN = '[A-Za-z0-9._\\-]{1,64}';
const NAME_RULE = '1 to 64 letters, digits, dots, dashes or underscores';

/** A one-field form for a group's or a channel's name. The name stays in the field until saved, so that a refused one can be corrected. */
function NameForm({ id, label, button, initial = '', onSave, pending, error }: { id: string; label: string; button: string; initial?: string; onSave: (name: string) => Promise<unknown>; pending: boolean; error: unknown }) {
  const [name, setName] = useState(initial);
  return (
    <>
      <InlineForm onSubmit={() => onSave(name).then(() => setName(initial), () => undefined)}>
        <label htmlFor={id}>{label}</label>
        <input id={id} required pattern={NAME_PATTERN} title={NAME_RULE} value={name} onChange={(event) => setName(event.target.value)} />
        <BusyButton type="submit" busy={pending}>
          {button}
        </BusyButton>
      </InlineForm>
      <ErrorNote error={error} />
    </>
  );
}

type Named = (Group & { kind: 'group' }) | (Channel & { kind: 'channel' });

/** One group or channel in the list: its count, its devices, and rename and delete for its owner. */
function NamedRow({ projectId, item }: { projectId: string; item: Named }) {
  const queryClient = useQueryClient();
  const [renaming, setRenaming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: item.kind === 'group' ? queryKeys.groups(projectId) : queryKeys.channels(projectId) });
  const rename = useMutation({ mutationFn: (name: string): Promise<unknown> =>
      item.kind === 'group'
        ? answer(api.PATCH('/api/v1/projects/{id}/groups/{gid}/', { params: { path: { id: projectId, gid: item.id } }, body: { name } }))
        : answer(api.PATCH('/api/v1/projects/{id}/channels/{cid}/', { params: { path: { id: projectId, cid: item.id } }, body: { name } })),
    onSuccess: () => Promise.all([refresh(), setRenaming(false)]) });
  const count = item.kind === 'group' ? item.member_count : item.device_count;
  const estimated = item.kind === 'group' ? item.member_count_estimated : item.device_count_estimated;
  const filter = item.kind === 'group' ? `group_id=${item.id}` : `channel_id=${item.id}`;
  return (
    <li data-testid={`${item.kind}-${item.name}`}>
      {item.kind === 'group' ? <Link to={`/projects/${projectId}/groups/${item.id}`}>{item.name}</Link> : <strong>{item.name}</strong>}{' '}
      {item.kind === 'channel' && item.is_default && <span className="tag">default</span>}{' '}
      <Link to={`/projects/${projectId}/devices?${filter}`}>
        {totalWords({ count, estimated })} device{count === 1 ? '' : 's'}
      </Link>{' '}
      <span className="muted">
        · created <Timestamp at={item.created_at} />
      </span>
      <RoleFieldset projectId={projectId} inline>
        <span className="row-actions">
          <button type="button" className="small" aria-label={`Rename ${item.kind} ${item.name}`} onClick={() => setRenaming(!renaming)}>
            Rename
          </button>
          {!(item.kind === 'channel' && item.is_default) && (
            <button type="button" className="small danger" aria-label={`Delete ${item.kind} ${item.name}`} onClick={() => setDeleting(true)}>
              Delete…
            </button>
          )}
        </span>
      </RoleFieldset>
      {renaming && <NameForm id={`rename-${item.id}`} label={`New name for ${item.name}`} button="Save name" initial={item.name} onSave={(name) => rename.mutateAsync(name)} pending={rename.isPending} error={rename.error} />}
      <ConfirmDialog
        open={deleting}
        title={`Delete the ${item.kind} ${item.name}?`}
        confirmLabel={`Delete ${item.kind}`}
        danger
        typeToConfirm={count > 0 ? item.name : undefined}
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await (item.kind === 'group'
            ? answer(api.DELETE('/api/v1/projects/{id}/groups/{gid}/', { params: { path: { id: projectId, gid: item.id } } }))
            : answer(api.DELETE('/api/v1/projects/{id}/channels/{cid}/', { params: { path: { id: projectId, cid: item.id } } })));
          await Promise.all([refresh(), queryClient.invalidateQueries({ queryKey: queryKeys.devices(projectId) })]);
        }}
      >
        {item.kind === 'group' ? (
          <p>
            Its {count} device{count === 1 ? '' : 's'} stay in the project, outside it. A group that a deployment not yet completed or cancelled targets cannot be deleted.
          </p>
        ) : (
          <p>A channel with devices, and one that a deployment not yet completed or cancelled targets, cannot be deleted: move its devices first.</p>
        )}
      </ConfirmDialog>
    </li>
  );
}

export function GroupsAndChannelsPage() {
  const { projectId = '' } = useParams();
  const queryClient = useQueryClient();
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  const createGroup = useMutation({
    mutationFn: (name: string) => answer(api.POST('/api/v1/projects/{id}/groups/', { params: { path: { id: projectId } }, body: { name } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.groups(projectId) }),
  });
  const createChannel = useMutation({
    mutationFn: (name: string) => answer(api.POST('/api/v1/projects/{id}/channels/', { params: { path: { id: projectId } }, body: { name } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.channels(projectId) }),
  });
  return (
    <>
      <h1>Groups and channels</h1>
      <ReadOnlyNote projectId={projectId} />
      <div className="columns">
        <section aria-labelledby="groups">
          <h2 id="groups">Groups</h2>
          <p className="muted">A device may be in many groups; deployments can target them (a canary group, say). Add many devices at once from the device list.</p>
          <LoadState loading={groups.isLoading} error={groups.error} empty={groups.data?.length === 0 && 'No groups yet.'}>
            <ul className="plain">
              {groups.data?.map((group) => (
                <NamedRow key={group.id} projectId={projectId} item={{ ...group, kind: 'group' }} />
              ))}
            </ul>
          </LoadState>
          <RoleFieldset projectId={projectId}>
            <NameForm id="new-group" label="New group" button="Create group" onSave={(name) => createGroup.mutateAsync(name)} pending={createGroup.isPending} error={createGroup.error} />
          </RoleFieldset>
        </section>
        <section aria-labelledby="channels">
          <h2 id="channels">Channels</h2>
          <p className="muted">Every device is on one channel; new devices land on the default one. Move a device from its page.</p>
          <LoadState loading={channels.isLoading} error={channels.error}>
            <ul className="plain">
              {channels.data?.map((channel) => (
                <NamedRow key={channel.id} projectId={projectId} item={{ ...channel, kind: 'channel' }} />
              ))}
            </ul>
          </LoadState>
          <RoleFieldset projectId={projectId}>
            <NameForm id="new-channel" label="New channel" button="Create channel" onSave={(name) => createChannel.mutateAsync(name)} pending={createChannel.isPending} error={createChannel.error} />
          </RoleFieldset>
        </section>
      </div>
    </>
  );
}

const MEMBER_PAGE = 50;

export function GroupPage() {
  const { projectId = '', groupId = '' } = useParams();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const groups = useGroups(projectId);
  const group = groups.data?.find((candidate) => candidate.id === groupId);
  const [after, setAfter] = useState<string[]>(['']);
  const [search, setSearch] = useState('');
  const filters = new URLSearchParams({ group_id: groupId });
  const members = useQuery({ queryKey: queryKeys.groupMembers(projectId, groupId, after.at(-1)), queryFn: () => devicePage(projectId, filters, after.at(-1)!, MEMBER_PAGE) });
  const candidates = useQuery({
    queryKey: queryKeys.deviceSearch(projectId, search),
    queryFn: () => devicePage(projectId, new URLSearchParams({ q: search }), '', 10),
    enabled: search.length > 0,
  });
  const change = useMutation({
    mutationFn: (body: { add?: string[]; remove?: string[] }) =>
      answer(api.POST('/api/v1/projects/{id}/groups/{gid}/members/changes/', { params: { path: { id: projectId, gid: groupId } }, body })),
    onSuccess: () => Promise.all([queryClient.invalidateQueries({ queryKey: queryKeys.devices(projectId) }), queryClient.invalidateQueries({ queryKey: queryKeys.groups(projectId) })]),
  });
  const total = members.data?.total.count ?? 0;
  return (
    <>
      <p className="crumbs">
        <Link to={`/projects/${projectId}/groups`}>Groups and channels</Link> /
      </p>
      <h1>Group {group?.name ?? '…'}</h1>
      <ErrorNote error={groups.error} />
      <ReadOnlyNote projectId={projectId} />
      <p className="muted" data-testid="member-count">
        {members.data ? totalWords(members.data.total) : 0} member{total === 1 ? '' : 's'} · <Link to={`/projects/${projectId}/devices?group_id=${groupId}`}>filter the device list by this group</Link>
      </p>
      <LoadState loading={members.isLoading} error={members.error} empty={total === 0 && 'No members yet.'}>
        <ul className="plain">
          {members.data?.devices.map((device) => (
            <li key={device.id}>
              <Link to={`/projects/${projectId}/devices/${device.id}`}>{device.device_id}</Link>{' '}
              <RoleFieldset projectId={projectId} inline>
                <button type="button" className="small" aria-label={`Remove ${device.device_id}`} onClick={() => change.mutate({ remove: [device.id] })}>
                  Remove
                </button>
              </RoleFieldset>
            </li>
          ))}
        </ul>
        {(after.length > 1 || members.data?.nextAfterId) && (
          <nav className="pager" aria-label="Member pages">
            <button type="button" disabled={after.length === 1} onClick={() => setAfter(after.slice(0, -1))}>
              Previous
            </button>
            <button type="button" disabled={!members.data?.nextAfterId} onClick={() => setAfter([...after, members.data!.nextAfterId!])}>
              Next
            </button>
          </nav>
        )}
      </LoadState>
      <RoleFieldset projectId={projectId}>
        <section aria-labelledby="add-members">
          <h2 id="add-members">Add devices</h2>
          <p className="muted">
            Find one by its device id here, or add many at once: <button type="button" className="link" onClick={() => navigate(`/projects/${projectId}/devices`)}>filter the device list and add the selection</button>.
          </p>
          <label>
            Find a device
            <input type="search" value={search} onChange={(event) => setSearch(event.target.value.trim())} placeholder="device id contains…" />
          </label>
          {candidates.data && (
            <ul className="plain" data-testid="candidates">
              {candidates.data.devices.length === 0 && <li className="muted">No device id contains “{search}”.</li>}
              {candidates.data.devices.map((device) => (
                <li key={device.id}>
                  {device.device_id}{' '}
                  {device.group_ids.includes(groupId) ? (
                    <span className="muted">already a member</span>
                  ) : (
                    <button type="button" className="small" aria-label={`Add ${device.device_id}`} onClick={() => change.mutate({ add: [device.id] })}>
                      Add
                    </button>
                  )}
                </li>
              ))}
              {candidates.data.nextAfterId && <li className="muted">and more: type more of the id.</li>}
            </ul>
          )}
          <ErrorNote error={change.error ?? candidates.error} />
        </section>
      </RoleFieldset>
    </>
  );
}
