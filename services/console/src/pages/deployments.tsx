import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { get, post } from '../api';
import { DataTable } from '../components/data-table';
import { BusyButton, ErrorNote, LoadState } from '../components/feedback';
import { RelativeTime } from '../components/time';
import { projectPath, useChannels, useGroups } from '../queries';
import type { Deployment } from '../types';
import { useArtifacts } from './artifacts';

const column = createColumnHelper<Deployment>();

export function DeploymentsPage() {
  const { projectId = '' } = useParams();
  const deployments = useQuery({
    queryKey: ['deployments', projectId],
    queryFn: () => get<Deployment[]>(`${projectPath(projectId)}/deployments/`),
    refetchInterval: 5_000,
  });
  const columns = [
    column.accessor('created_at', {
      header: 'Created',
      cell: (info) => (
        <Link to={`/projects/${projectId}/deployments/${info.row.original.id}`}>
          <RelativeTime at={info.getValue()} />
        </Link>
      ),
    }),
    column.accessor('build_number', { header: 'Build', cell: (info) => `${info.getValue()} (${info.row.original.version_label})` }),
    column.accessor('state', { header: 'State', cell: (info) => <span className={`state state-${info.getValue()}`}>{info.getValue()}</span> }),
    column.accessor('rollout_percentage', { header: 'Rollout', cell: (info) => `${info.getValue()}%` }),
    column.accessor('failure_count', { header: 'Failures' }),
    column.accessor('notes', { header: 'Notes' }),
  ];
  return (
    <>
      <h1>Deployments</h1>
      <LoadState loading={deployments.isLoading} error={deployments.error} empty={deployments.data?.length === 0 && 'No deployments yet: create one from a build below.'}>
        <DataTable rows={deployments.data ?? []} columns={columns} caption="Deployments" initialSort={[{ id: 'created_at', desc: true }]} />
      </LoadState>
      <CreateDeployment projectId={projectId} />
    </>
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
  const create = useMutation({
    mutationFn: () =>
      post<Deployment>(`${projectPath(projectId)}/deployments/`, {
        artifact_id: artifactId,
        target_group_ids: groupIds,
        target_channel_ids: channelIds,
        rollout_percentage: percentage,
        ...(notes ? { notes } : {}),
      }),
    onSuccess: async (deployment) => {
      await queryClient.invalidateQueries({ queryKey: ['deployments', projectId] });
      navigate(`/projects/${projectId}/deployments/${deployment.id}`);
    },
  });
  const toggle = (list: string[], id: string) => (list.includes(id) ? list.filter((other) => other !== id) : [...list, id]);
  const usable = (artifacts.data ?? []).filter((artifact) => !artifact.archived).sort((a, b) => b.build_number - a.build_number);
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
        <label>
          Rollout percentage
          <input type="number" min={0} max={100} step={1} required value={percentage} onChange={(event) => setPercentage(Number(event.target.value))} />
        </label>
        <label>
          Notes <input value={notes} maxLength={500} onChange={(event) => setNotes(event.target.value)} />
        </label>
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
