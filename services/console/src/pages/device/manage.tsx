import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { answer, api } from '../../api';
import { BusyButton, ConfirmDialog, ErrorNote, ShownOnce } from '../../components/feedback';
import { MembershipEditor } from '../../components/membership-editor';
import { NamedOptions } from '../../components/named-options';
import { namesById, useChannels, useGroups } from '../../queries';
import { queryKeys } from '../../query-keys';
import type { Device } from '../../types';

/**
 * What a person who may write the project does to a device: move it to another channel,
 * deactivate or reactivate it, change its groups, issue or revoke its own token, delete it. Each
 * change that cannot be taken back is asked about first.
 */
export function DeviceManagement({ projectId, device: d }: { projectId: string; device: Device }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const deviceId = d.id;
  const params = { path: { id: projectId, did: deviceId } };
  const channels = useChannels(projectId);
  const groups = useGroups(projectId);
  const [rawToken, setRawToken] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  // The channel chosen in the select; the device moves only once the move is confirmed.
  const [channelChoice, setChannelChoice] = useState('');
  const [asking, setAsking] = useState<'move' | 'deactivate' | 'rotate' | 'revoke-token' | null>(null);
  const [done, setDone] = useState('');
  const channelNames = namesById(channels.data);
  const groupNames = namesById(groups.data);
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
  const chosenChannel = channelChoice || d.channel_id;

  return (
    <>
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
