import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { answer, api } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState } from '../components/feedback';
import { Timestamp } from '../components/time';
import { useSession } from '../session';
import type { Project } from '../types';
import { InlineForm } from '../components/inline-form';
import { queryKeys, type ProjectOwner } from '../query-keys';
import { roleReason } from '../project-access';

export function ProjectsPage() {
  const session = useSession().data!;
  const [searchParams, setSearchParams] = useSearchParams();
  const customer = session.user.is_staff ? (searchParams.get('owner_email') ?? '') : '';
  return (
    <>
      <h1>Projects</h1>
      <Invitations />
      <ProjectList owner={session.user.is_staff ? { owner_id: session.user.id } : {}} own email={session.user.email} />
      <CreateProject />
      {session.user.is_staff && (
        <section aria-labelledby="customers">
          <h2 id="customers">A customer’s projects (staff)</h2>
          <p className="muted">Staff read any project, and change only their own. Look a customer up by their exact e-mail.</p>
          <CustomerLookup
            email={customer}
            onLookup={(email) => setSearchParams(email ? { owner_email: email } : {})}
          />
          {customer && <ProjectList owner={{ email: customer }} own={false} />}
        </section>
      )}
    </>
  );
}

function CustomerLookup({ email, onLookup }: { email: string; onLookup: (email: string) => void }) {
  const [text, setText] = useState(email);
  return (
    <InlineForm onSubmit={() => onLookup(text.trim())}>
      <label htmlFor="owner-email">Customer e-mail</label>
      <input id="owner-email" type="email" required value={text} onChange={(event) => setText(event.target.value)} placeholder="someone@example.com" />
      <button type="submit">Look up</button>
    </InlineForm>
  );
}

/**
 * The invitations to the person's e-mail (docs/api.md, "Invitations"): a project appears in their
 * list only once they accept one.
 */
function Invitations() {
  const queryClient = useQueryClient();
  const invitations = useQuery({ queryKey: queryKeys.invitations(), queryFn: () => answer(api.GET('/api/v1/me/invitations/')) });
  const respond = useMutation({
    mutationFn: ({ projectId, accept }: { projectId: string; accept: boolean }) =>
      accept
        ? answer(api.POST('/api/v1/me/invitations/{pid}/accept/', { params: { path: { pid: projectId } } }))
        : answer(api.DELETE('/api/v1/me/invitations/{pid}/', { params: { path: { pid: projectId } } })),
    onSettled: () => Promise.all([queryClient.invalidateQueries({ queryKey: queryKeys.invitations() }), queryClient.invalidateQueries({ queryKey: queryKeys.projects() })]),
  });
  if (!invitations.data?.length) return null;
  return (
    <section aria-labelledby="invitations" data-testid="invitations">
      <h2 id="invitations">Invitations</h2>
      <ul className="cards">
        {invitations.data.map((invitation) => {
          const busy = respond.isPending && respond.variables?.projectId === invitation.project_id;
          return (
            <li key={invitation.project_id} className="card">
              <strong>{invitation.project_name}</strong>
              <span className="muted">
                as {invitation.role} · invited <Timestamp at={invitation.invited_at} />
              </span>
              <div className="row">
                <BusyButton type="button" className="primary small" busy={busy && respond.variables?.accept === true} disabled={busy} onClick={() => respond.mutate({ projectId: invitation.project_id, accept: true })}>
                  Accept
                </BusyButton>
                <BusyButton type="button" className="small" busy={busy && respond.variables?.accept === false} disabled={busy} onClick={() => respond.mutate({ projectId: invitation.project_id, accept: false })}>
                  Decline
                </BusyButton>
              </div>
            </li>
          );
        })}
      </ul>
      <ErrorNote error={respond.error} />
    </section>
  );
}

function ProjectList({ owner, own, email }: { owner: ProjectOwner; own: boolean; email?: string }) {
  const queryClient = useQueryClient();
  const projects = useQuery({ queryKey: queryKeys.projects(owner), queryFn: () => answer(api.GET('/api/v1/projects/', { params: { query: owner } })) });
  const [deleting, setDeleting] = useState<Project | null>(null);
  return (
    <>
      <LoadState
        loading={projects.isLoading}
        error={projects.error}
        empty={
          projects.data?.length === 0 &&
          (own
            ? `No projects yet: create the first one below, or ask an admin of a project to invite ${email ?? 'your e-mail address'}; an invitation appears here.`
            : 'This customer has no projects, or no user has that e-mail.')
        }
      >
        <ul className="cards" data-testid={own ? 'own-projects' : 'customer-projects'}>
          {projects.data?.map((project) => (
            <li key={project.id} className="card">
              <Link to={`/projects/${project.id}/deployments`}>
                <strong>{project.name}</strong>
              </Link>
              <span className="muted">
                {project.slug} · created <Timestamp at={project.created_at} />
                {project.role && project.role !== 'admin' && <> · your role: {project.role}</>}
              </span>
              {own && (
                <button
                  type="button"
                  className="danger small"
                  aria-label={`Delete ${project.name}`}
                  disabled={project.role !== undefined && project.role !== 'admin'}
                  title={project.role !== undefined && project.role !== 'admin' ? roleReason(project.role, 'admin') : undefined}
                  onClick={() => setDeleting(project)}
                >
                  Delete…
                </button>
              )}
            </li>
          ))}
        </ul>
      </LoadState>
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting?.name ?? ''}?`}
        confirmLabel="Delete project"
        danger
        typeToConfirm={deleting?.name}
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          await answer(api.DELETE('/api/v1/projects/{id}/', { params: { path: { id: deleting!.id } } }));
          await queryClient.invalidateQueries({ queryKey: queryKeys.projects() });
        }}
      >
        <p>Its devices, groups, channels and webhooks go with it, and its project and device tokens stop working. A project with an active or paused deployment cannot be deleted.</p>
      </ConfirmDialog>
    </>
  );
}

function CreateProject() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => answer(api.POST('/api/v1/projects/', { body: { name } })),
    onSuccess: () => {
      setName('');
      void queryClient.invalidateQueries({ queryKey: queryKeys.projects() });
    },
  });
  return (
    <>
      <InlineForm onSubmit={() => create.mutate()}>
        <label htmlFor="project-name">New project</label>
        <input id="project-name" required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} placeholder="Greenhouse sensors" />
        <BusyButton type="submit" className="primary" busy={create.isPending}>
          Create project
        </BusyButton>
      </InlineForm>
      <ErrorNote error={create.error} />
    </>
  );
}
