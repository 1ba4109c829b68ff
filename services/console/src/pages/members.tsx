import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { answer, api, ApiError } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState } from '../components/feedback';
import { InlineForm } from '../components/inline-form';
import { PlainTable } from '../components/plain-table';
import { Timestamp } from '../components/time';
import { ROLES, ReadOnlyNote, roleReason, useProjectRole, useProjectWrite, type Role } from '../project-access';
import { queryKeys } from '../query-keys';
import { useSession } from '../session';
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

function memberKey(member: ProjectMember): string {
  return member.kind === 'group' ? `group:${member.group}` : member.kind === 'invitation' ? `invitation:${member.email}` : `user:${member.user_id}`;
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
  const [leaving, setLeaving] = useState(false);
  // A group no sign-in has carried yet: the API's reason, asked about before the grant is sent again.
  const [unseenGroup, setUnseenGroup] = useState('');
  const [done, setDone] = useState('');
  const navigate = useNavigate();
  const me = useSession().data?.user;
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.members(projectId) });
  const grant = useMutation({
    mutationFn: (confirmUnseenGroup: boolean) =>
      answer(
        api.POST('/api/v1/projects/{id}/members/', {
          params: { path: { id: projectId } },
          body: { [subject]: name.trim(), role: granted, ...(confirmUnseenGroup ? { confirm_unseen_group: true } : {}) },
        }),
      ),
    // The line of the grant before would stand beside this one's refusal.
    onMutate: () => setDone(''),
    onSuccess: (member) => {
      setDone(
        member.kind === 'invitation'
          ? `Invited ${member.email} as ${member.role}: the role is theirs once they accept it, from their Projects page (after their first sign-in too).`
          : `${memberName(member)} is now ${member.role}.`,
      );
      setName('');
      return refresh();
    },
    onError: (error) => {
      if (error instanceof ApiError && error.status === 409 && subject === 'group') setUnseenGroup(error.message);
    },
  });
  const revoke = async (member: ProjectMember) => {
    if (member.kind === 'user') await answer(api.DELETE('/api/v1/projects/{id}/members/users/{uid}/', { params: { path: { id: projectId, uid: member.user_id! } } }));
    else if (member.kind === 'invitation') await answer(api.DELETE('/api/v1/projects/{id}/members/invitations/{email}/', { params: { path: { id: projectId, email: member.email! } } }));
    else await answer(api.DELETE('/api/v1/projects/{id}/members/groups/{group}/', { params: { path: { id: projectId, group: member.group! } } }));
    setDone(member.kind === 'invitation' ? `The invitation of ${member.email} is withdrawn.` : `${memberName(member)} holds no role here any more.`);
    await refresh();
  };
  const ownGrant = (members.data ?? []).some((member) => member.kind === 'user' && member.user_id === me?.id);
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
            <tr key={memberKey(member)} data-testid={`member-${memberKey(member)}`}>
              <td>
                {memberName(member)} {member.kind === 'owner' && <span className="tag">owner</span>}
                {member.kind === 'invitation' && <span className="tag">invited, not accepted yet</span>}
                {member.kind === 'group' && <GroupHolders holders={member.holders ?? []} />}
              </td>
              <td>{member.role}</td>
              <td>{member.granted_at ? <Timestamp at={member.granted_at} /> : '—'}</td>
              <td>
                {member.kind !== 'owner' && (
                  <button type="button" className="danger" disabled={!admin} title={admin ? undefined : roleReason(role, 'admin')} onClick={() => setRevoking(member)}>
                    {member.kind === 'invitation' ? 'Withdraw…' : 'Revoke…'}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </PlainTable>
      </LoadState>
      {ownGrant && (
        <p>
          <button type="button" className="danger" onClick={() => setLeaving(true)}>
            Leave this project…
          </button>
        </p>
      )}

      <section aria-labelledby="grant">
        <h2 id="grant">Grant a role</h2>
        <ReadOnlyNote projectId={projectId} needed="admin" what="Granting and revoking roles" />
        <p className="muted">A person is invited by e-mail, before their first sign-in too; the role is theirs once they accept it.</p>
        <InlineForm onSubmit={() => grant.mutate(false)}>
          <label htmlFor="grant-subject">To</label>
          <select id="grant-subject" value={subject} disabled={!admin} onChange={(event) => setSubject(event.target.value as 'email' | 'group')}>
            <option value="email">invite the person with e-mail</option>
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
            {subject === 'email' ? 'Invite' : 'Grant'}
          </BusyButton>
        </InlineForm>
        {!unseenGroup && <ErrorNote error={grant.error} />}
      </section>

      <ConfirmDialog
        open={revoking !== null}
        title={revoking?.kind === 'invitation' ? `Withdraw the invitation of ${revoking.email}?` : `Revoke the role of ${revoking ? memberName(revoking) : ''}?`}
        confirmLabel={revoking?.kind === 'invitation' ? 'Withdraw invitation' : 'Revoke role'}
        danger
        onClose={() => setRevoking(null)}
        onConfirm={() => revoke(revoking!)}
      >
        {revoking?.kind === 'invitation' ? (
          <p>They can no longer accept it.</p>
        ) : (
          <p>
            From their next request on they act with what other grants leave them, or lose the project altogether.
            {revoking?.kind === 'user' && ' The api tokens they made here are revoked with it.'}
          </p>
        )}
      </ConfirmDialog>
      <ConfirmDialog
        open={unseenGroup !== ''}
        title={`Grant ${granted} to a group no one has signed in with?`}
        confirmLabel={`Grant to “${name.trim()}”`}
        onClose={() => setUnseenGroup('')}
        onConfirm={() => grant.mutateAsync(true).then(() => setUnseenGroup(''))}
      >
        <p>{unseenGroup}</p>
        <p className="muted">Check the group's name as the identity provider sends it (its groups claim).</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={leaving}
        title="Leave this project?"
        confirmLabel="Leave project"
        danger
        onClose={() => setLeaving(false)}
        onConfirm={async () => {
          await answer(api.DELETE('/api/v1/projects/{id}/members/me/', { params: { path: { id: projectId } } }));
          await queryClient.invalidateQueries({ queryKey: queryKeys.projects() });
          void navigate('/');
        }}
      >
        <p>You give up your role here; the api tokens you made here are revoked. A role you hold through a group of your sign-in stays until an admin revokes it.</p>
      </ConfirmDialog>
    </>
  );
}

/** Who holds a group's role, as their latest single sign-on said. */
function GroupHolders({ holders }: { holders: string[] }) {
  return (
    <div className="muted" data-testid="group-holders">
      {holders.length === 0 ? 'no one has signed in with this group yet' : `held by ${holders.join(', ')} (as last seen at sign-in)`}
    </div>
  );
}
