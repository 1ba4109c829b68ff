import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router-dom';
import { answer, api } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState } from '../components/feedback';
import { InlineForm } from '../components/inline-form';
import { PlainTable } from '../components/plain-table';
import { Timestamp } from '../components/time';
import { ROLES, ReadOnlyNote, roleReason, useProjectRole, useProjectWrite, type Role } from '../project-access';
import { queryKeys } from '../query-keys';
import type { ProjectMember } from '../types';

/** What each role may do, as docs/api.md ("Roles") says it. */
const ROLE_WORDS: Record<Role, string> = {
  viewer: 'reads the project',
  operator: 'also changes devices, groups, channels, builds, deployments and webhooks',
  approver: 'also resumes guardrail pauses, passes approval gates and goes around holds on a build',
  admin: 'also manages tokens, signing keys, members and the project',
};

function memberName(member: ProjectMember): string {
  return member.kind === 'group' ? `group “${member.group}”` : (member.email ?? member.user_id ?? '');
}

/** Who holds which role in the project; an admin grants and revokes them here. */
export function MembersPage() {
  const { projectId = '' } = useParams();
  const queryClient = useQueryClient();
  const role = useProjectRole(projectId);
  const admin = useProjectWrite(projectId, 'admin');
  const members = useQuery({ queryKey: queryKeys.members(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/members/', { params: { path: { id: projectId } } })) });
  const [subject, setSubject] = useState<'email' | 'group'>('email');
  const [name, setName] = useState('');
  const [granted, setGranted] = useState<Role>('viewer');
  const [revoking, setRevoking] = useState<ProjectMember | null>(null);
  const [done, setDone] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.members(projectId) });
  const grant = useMutation({
    mutationFn: () => answer(api.POST('/api/v1/projects/{id}/members/', { params: { path: { id: projectId } }, body: { [subject]: name.trim(), role: granted } })),
    // The line of the grant before would stand beside this one's refusal.
    onMutate: () => setDone(''),
    onSuccess: (member) => {
      setDone(`${memberName(member)} is now ${member.role}.`);
      setName('');
      return refresh();
    },
  });
  const revoke = async (member: ProjectMember) => {
    if (member.kind === 'user') await answer(api.DELETE('/api/v1/projects/{id}/members/users/{uid}/', { params: { path: { id: projectId, uid: member.user_id! } } }));
    else await answer(api.DELETE('/api/v1/projects/{id}/members/groups/{group}/', { params: { path: { id: projectId, group: member.group! } } }));
    setDone(`${memberName(member)} holds no role here any more.`);
    await refresh();
  };
  return (
    <>
      <h1>Members</h1>
      <p className="muted">
        Your role here is <strong>{role ?? '…'}</strong>. Each role may do all that the ones above it in this list may.
      </p>
      <ul className="plain" data-testid="role-words">
        {ROLES.map((each) => (
          <li key={each}>
            <strong>{each}</strong> {ROLE_WORDS[each]}
          </li>
        ))}
      </ul>
      {done && (
        <p className="ok" role="status" data-testid="members-done">
          {done}
        </p>
      )}
      <LoadState loading={members.isLoading} error={members.error}>
        <PlainTable caption="Who holds a role in this project" headers={['Who', 'Role', 'Since', '']}>
          {(members.data ?? []).map((member) => (
            <tr key={member.kind === 'group' ? `group:${member.group}` : `user:${member.user_id}`}>
              <td>
                {memberName(member)} {member.kind === 'owner' && <span className="tag">owner</span>}
              </td>
              <td>{member.role}</td>
              <td>{member.granted_at ? <Timestamp at={member.granted_at} /> : '—'}</td>
              <td>
                {member.kind !== 'owner' && (
                  <button type="button" className="danger" disabled={!admin} title={admin ? undefined : roleReason(role, 'admin')} onClick={() => setRevoking(member)}>
                    Revoke…
                  </button>
                )}
              </td>
            </tr>
          ))}
        </PlainTable>
      </LoadState>

      <section aria-labelledby="grant">
        <h2 id="grant">Grant a role</h2>
        <ReadOnlyNote projectId={projectId} needed="admin" what="Granting and revoking roles" />
        <InlineForm onSubmit={() => grant.mutate()}>
          <label htmlFor="grant-subject">To</label>
          <select id="grant-subject" value={subject} disabled={!admin} onChange={(event) => setSubject(event.target.value as 'email' | 'group')}>
            <option value="email">the person with e-mail</option>
            <option value="group">everyone in the sign-in group</option>
          </select>
          <input
            aria-label={subject === 'email' ? 'E-mail' : 'Group'}
            type={subject === 'email' ? 'email' : 'text'}
            required
            disabled={!admin}
            value={name}
            onChange={(event) => setName(event.target.value)}
            placeholder={subject === 'email' ? 'name@example.com' : 'platform-ops'}
          />
          <label htmlFor="grant-role">as</label>
          <select id="grant-role" value={granted} disabled={!admin} onChange={(event) => setGranted(event.target.value as Role)}>
            {ROLES.map((each) => (
              <option key={each} value={each}>
                {each}
              </option>
            ))}
          </select>
          <BusyButton type="submit" busy={grant.isPending} disabled={!admin || name.trim() === ''} title={admin ? undefined : roleReason(role, 'admin')}>
            Grant
          </BusyButton>
        </InlineForm>
        <ErrorNote error={grant.error} />
      </section>

      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke the role of ${revoking ? memberName(revoking) : ''}?`}
        confirmLabel="Revoke role"
        danger
        onClose={() => setRevoking(null)}
        onConfirm={() => revoke(revoking!)}
      >
        <p>From their next request on they act with what other grants leave them, or lose the project altogether.</p>
      </ConfirmDialog>
    </>
  );
}
