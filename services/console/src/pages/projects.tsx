import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { del, get, post } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState } from '../components/feedback';
import { RelativeTime } from '../components/time';
import type { Project } from '../types';
import { InlineForm } from '../components/inline-form';

export function useProject(projectId: string) {
  return useQuery({ queryKey: ['project', projectId], queryFn: () => get<Project>(`/projects/${projectId}/`) });
}

export function ProjectsPage() {
  const queryClient = useQueryClient();
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => get<Project[]>('/projects/') });
  const [name, setName] = useState('');
  const [deleting, setDeleting] = useState<Project | null>(null);
  const create = useMutation({
    mutationFn: () => post<Project>('/projects/', { name }),
    onSuccess: () => {
      setName('');
      void queryClient.invalidateQueries({ queryKey: ['projects'] });
    },
  });
  return (
    <>
      <h1>Projects</h1>
      <LoadState loading={projects.isLoading} error={projects.error} empty={projects.data?.length === 0 && 'No projects yet: create the first one below.'}>
        <ul className="cards">
          {projects.data?.map((project) => (
            <li key={project.id} className="card">
              <Link to={`/projects/${project.id}/deployments`}>
                <strong>{project.name}</strong>
              </Link>
              <span className="muted">
                {project.slug} · created <RelativeTime at={project.created_at} />
              </span>
              <button type="button" className="danger small" onClick={() => setDeleting(project)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      </LoadState>
      <InlineForm onSubmit={() => create.mutate()}>
        <label htmlFor="project-name">New project</label>
        <input id="project-name" required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} placeholder="Greenhouse sensors" />
        <BusyButton type="submit" className="primary" busy={create.isPending}>
          Create project
        </BusyButton>
      </InlineForm>
      <ErrorNote error={create.error} />
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting?.name ?? ''}?`}
        confirmLabel="Delete project"
        danger
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          await del(`/projects/${deleting!.id}/`);
          await queryClient.invalidateQueries({ queryKey: ['projects'] });
        }}
      >
        <p>Its devices, groups, channels, artifacts and tokens go with it. A project with an active or paused deployment cannot be deleted.</p>
      </ConfirmDialog>
    </>
  );
}
