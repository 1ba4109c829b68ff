import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router-dom';
import { answer, api } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState, ShownOnce } from '../components/feedback';
import { Timestamp } from '../components/time';
import { noteSignedOutBecause, useSession } from '../session';
import type { SigningKey, Token, TokenCreated } from '../types';
import { InlineForm } from '../components/inline-form';
import { PlainTable } from '../components/plain-table';
import { ReadOnlyNote, roleReason, ROLES, useProjectRole, useProjectWrite, type Role } from '../project-access';
import { queryKeys } from '../query-keys';

/** What revoking a token destroys, in words, by its kind. */
function revokeConsequence(token: Token, signedInWith: boolean, livePersonal: number): string {
  if (signedInWith) {
    return livePersonal <= 1
      ? 'This console is signed in with it, and it is your only live personal token: you will be signed out at once, and you cannot sign in again until an operator issues you a new token.'
      : 'This console is signed in with it: you will be signed out at once, and must sign in again with another personal token.';
  }
  if (token.scope === 'device') return 'Every device that checks with it gets 401 from its next check on, until it is flashed with another token. Devices with a token of their own are not affected.';
  if (token.scope === 'api') return 'Every CI job or script that uses it gets 401 from its next call on.';
  return 'Every script that uses it gets 401 from its next call on.';
}

/**
 * Which token a dialog is about, beyond its name (two tokens may share one): its prefix, scope, age
 * and last use, the facts that tell a fleet's live token from a forgotten one.
 */
function TokenIdentity({ token }: { token: Token }) {
  return (
    <p data-testid="token-identity">
      <code>{token.prefix}…</code>, scope {token.scope}, created <Timestamp at={token.created_at} />;{' '}
      {token.last_used_at ? (
        <>
          last used <Timestamp at={token.last_used_at} />
        </>
      ) : (
        <strong>never used</strong>
      )}
      .
    </p>
  );
}

/** A list of tokens with create (raw token shown once) and revoke; `scopes` offers a scope choice. */
/** Where a token list lives: the signed-in person's own tokens, or a project's. */
interface NewToken {
  name: string;
  scope: 'api' | 'device';
  role: Role;
  /** Undefined: the API's default (90 days for a personal token, never for a project token); null: never. */
  expiresAt: string | null | undefined;
}

interface TokenCalls {
  list: () => Promise<Token[]>;
  create: (token: NewToken) => Promise<TokenCreated>;
  revoke: (tokenId: string) => Promise<unknown>;
}

const personalTokenCalls: TokenCalls = {
  list: () => answer(api.GET('/api/v1/me/tokens/')),
  create: ({ name, expiresAt }) => answer(api.POST('/api/v1/me/tokens/', { body: { name, ...(expiresAt === undefined ? {} : { expires_at: expiresAt }) } })),
  revoke: (tid) => answer(api.DELETE('/api/v1/me/tokens/{tid}/', { params: { path: { tid } } })),
};

function projectTokenCalls(id: string): TokenCalls {
  return {
    list: () => answer(api.GET('/api/v1/projects/{id}/tokens/', { params: { path: { id } } })),
    create: ({ name, scope, role, expiresAt }) =>
      answer(api.POST('/api/v1/projects/{id}/tokens/', { params: { path: { id } }, body: { name, scope, ...(scope === 'api' ? { role } : {}), ...(expiresAt ? { expires_at: expiresAt } : {}) } })),
    revoke: (tid) => answer(api.DELETE('/api/v1/projects/{id}/tokens/{tid}/', { params: { path: { id, tid } } })),
  };
}

/** The lifetimes a new token may be given, by kind; the first is the default. */
const PERSONAL_LIFETIMES = [
  { label: '90 days', days: undefined },
  { label: '30 days', days: 30 },
  { label: '1 year', days: 365 },
  { label: 'never expires', days: null },
] as const;
const PROJECT_LIFETIMES = [
  { label: 'never expires', days: null },
  { label: '90 days', days: 90 },
  { label: '1 year', days: 365 },
] as const;

function expiryOf(days: number | null | undefined): string | null | undefined {
  return typeof days === 'number' ? new Date(Date.now() + days * 86_400_000).toISOString() : days;
}

function TokenList({
  calls,
  queryKey,
  scopes,
  writable = true,
  makerRole,
}: {
  calls: TokenCalls;
  queryKey: readonly string[];
  scopes?: Array<'api' | 'device'>;
  writable?: boolean;
  /** A project token's role is at most its maker's. */
  makerRole?: Role;
}) {
  const queryClient = useQueryClient();
  const session = useSession().data;
  const tokens = useQuery({ queryKey, queryFn: calls.list });
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'api' | 'device'>(scopes?.[0] ?? 'api');
  const [role, setRole] = useState<Role>('operator');
  const lifetimes = scopes ? PROJECT_LIFETIMES : PERSONAL_LIFETIMES;
  const [lifetime, setLifetime] = useState(0);
  const [raw, setRaw] = useState('');
  const [revoking, setRevoking] = useState<Token | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey });
  const create = useMutation({
    mutationFn: () => calls.create({ name, scope, role, expiresAt: expiryOf(lifetimes[lifetime]!.days) }),
    onSuccess: (token) => {
      setRaw(token.token);
      setName('');
      return refresh();
    },
  });
  const isSessionToken = (token: Token) => !scopes && session?.token_prefix === token.prefix;
  // Project tokens are an admin's (docs/api.md, "Roles").
  const readOnlyReason = roleReason(makerRole, 'admin');
  const livePersonal = (tokens.data ?? []).filter((token) => !token.revoked_at).length;
  return (
    <>
      <LoadState loading={tokens.isLoading} error={tokens.error} empty={tokens.data?.length === 0 && 'No tokens.'}>
        <PlainTable caption="Tokens" headers={['Name', 'Prefix', scopes ? 'Scope and role' : 'Scope', ...(scopes ? ['Made by'] : []), 'Created', 'Expires', 'Last used', 'State']}>
          {tokens.data?.map((token) => (
            <tr key={token.id} data-testid={`token-${token.name}`}>
              <td>
                {token.name} {isSessionToken(token) && <span className="tag">this session</span>}
              </td>
              <td>
                <code>{token.prefix}</code>
              </td>
              <td>
                {token.scope}
                {token.role ? `, ${token.role}` : ''}
                {token.single_sign_on && <span className="tag" title="It works while the identity provider vouches for you">single sign-on</span>}
              </td>
              {scopes && <td>{token.created_by ? token.created_by.email : <span className="muted">{token.scope === 'device' ? 'the fleet' : 'the owner (before makers were recorded)'}</span>}</td>}
              <td>
                <Timestamp at={token.created_at} />
              </td>
              <td>{token.expires_at ? <Timestamp at={token.expires_at} /> : <span className="muted">never</span>}</td>
              <td>
                <Timestamp at={token.last_used_at} />
              </td>
              <td>
                {token.revoked_at ? (
                  <span className="muted">
                    revoked <Timestamp at={token.revoked_at} />
                  </span>
                ) : (
                  <button
                    type="button"
                    className="small danger"
                    aria-label={`Revoke ${token.name} (${token.prefix}…)`}
                    disabled={!writable}
                    title={writable ? undefined : readOnlyReason}
                    onClick={() => setRevoking(token)}
                  >
                    Revoke…
                  </button>
                )}
              </td>
            </tr>
          ))}
        </PlainTable>
      </LoadState>
      {raw && <ShownOnce label="The new token." secret={raw} onDismiss={() => setRaw('')} />}
      <fieldset className="bare" disabled={!writable} title={writable ? undefined : readOnlyReason}>
        <InlineForm onSubmit={() => create.mutate()}>
          <label htmlFor={`${queryKey.join('-')}-name`}>New token</label>
          <input id={`${queryKey.join('-')}-name`} required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} placeholder="ci, fleet, …" />
          {scopes && (
            <select aria-label="Scope" value={scope} onChange={(event) => setScope(event.target.value as 'api' | 'device')}>
              <option value="api">api: the developer API (CI)</option>
              <option value="device">device: the device API only (a fleet)</option>
            </select>
          )}
          {scopes && scope === 'api' && (
            // A token acts with at most its maker's role: higher ones are not offered.
            <select aria-label="Role" value={role} onChange={(event) => setRole(event.target.value as Role)}>
              {ROLES.filter((candidate) => makerRole === undefined || ROLES.indexOf(candidate) <= ROLES.indexOf(makerRole)).map((candidate) => (
                <option key={candidate} value={candidate}>
                  as {candidate}
                </option>
              ))}
            </select>
          )}
          <select aria-label="Expires" value={lifetime} onChange={(event) => setLifetime(Number(event.target.value))}>
            {lifetimes.map((choice, index) => (
              <option key={choice.label} value={index}>
                {choice.label}
              </option>
            ))}
          </select>
          <BusyButton type="submit" busy={create.isPending}>
            Create token
          </BusyButton>
        </InlineForm>
      </fieldset>
      <ErrorNote error={create.error} />
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke the token ${revoking?.name ?? ''} (${revoking?.prefix ?? ''}…)?`}
        confirmLabel={revoking && isSessionToken(revoking) ? 'Revoke and sign out' : 'Revoke token'}
        danger
        // The fleet's token ends every device's checks: the person types its name.
        typeToConfirm={revoking?.scope === 'device' ? revoking.name : undefined}
        acknowledge={revoking && isSessionToken(revoking) ? 'I understand that this signs me out of this console now.' : undefined}
        onClose={() => setRevoking(null)}
        onConfirm={async () => {
          const token = revoking!;
          if (isSessionToken(token)) noteSignedOutBecause(`You revoked the token this console was signed in with (${token.name}, ${token.prefix}…). Sign in with another personal token.`);
          await calls.revoke(token.id);
          await refresh();
        }}
      >
        {revoking && <TokenIdentity token={revoking} />}
        <p>{revoking && revokeConsequence(revoking, isSessionToken(revoking), livePersonal)}</p>
        <p className="muted">A revoked token cannot be brought back; a new one has a new secret.</p>
      </ConfirmDialog>
    </>
  );
}

export function PersonalTokensPage() {
  return (
    <>
      <h1>Personal tokens</h1>
      <p className="muted">
        A personal token acts for you on every project of yours. The one this console signed in with is marked; revoking it ends this session. One made while signed in through
        single sign-on works only while the identity provider vouches for you.
      </p>
      <TokenList calls={personalTokenCalls} queryKey={queryKeys.personalTokens()} />
    </>
  );
}

export function ProjectTokensPage() {
  const { projectId = '' } = useParams();
  // Tokens and signing keys are an admin's (docs/api.md, "Roles").
  const writable = useProjectWrite(projectId, 'admin');
  const role = useProjectRole(projectId);
  return (
    <>
      <h1>Project tokens</h1>
      <p className="muted">
        <strong>api</strong> tokens call the developer API of this project (CI), with their role but never more than their maker holds here: removing the maker revokes
        them. <strong>device</strong> tokens only call the device API, and are the ones to flash onto a fleet.
      </p>
      <ReadOnlyNote projectId={projectId} needed="admin" what="Making and revoking tokens and signing keys" />
      <TokenList calls={projectTokenCalls(projectId)} queryKey={queryKeys.projectTokens(projectId)} scopes={['api', 'device']} writable={writable} makerRole={role} />
      <SigningKeys projectId={projectId} writable={writable} role={role} />
    </>
  );
}

function SigningKeys({ projectId, writable, role }: { projectId: string; writable: boolean; role: Role | undefined }) {
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: queryKeys.signingKeys(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/signing-keys/', { params: { path: { id: projectId } } })) });
  const [name, setName] = useState('');
  const [publicKey, setPublicKey] = useState('');
  const [removing, setRemoving] = useState<SigningKey | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.signingKeys(projectId) });
  const add = useMutation({
    mutationFn: () => answer(api.POST('/api/v1/projects/{id}/signing-keys/', { params: { path: { id: projectId } }, body: { name, public_key: publicKey.trim() } })),
    onSuccess: () => {
      setName('');
      setPublicKey('');
      return refresh();
    },
  });
  return (
    <section aria-labelledby="keys">
      <h2 id="keys">Signing keys</h2>
      <p className="muted">An upload whose manifest carries a signature is accepted only if it verifies against one of these Ed25519 keys.</p>
      <LoadState loading={keys.isLoading} error={keys.error} empty={keys.data?.length === 0 && 'No signing keys.'}>
        <ul className="plain">
          {keys.data?.map((key) => (
            <li key={key.id}>
              <strong>{key.name}</strong> <span className="hash">{key.fingerprint.slice(0, 24)}…</span> <Timestamp at={key.created_at} />{' '}
              <button
                type="button"
                className="small danger"
                aria-label={`Delete key ${key.name}`}
                disabled={!writable}
                title={writable ? undefined : roleReason(role, 'admin')}
                onClick={() => setRemoving(key)}
              >
                Delete…
              </button>
            </li>
          ))}
        </ul>
      </LoadState>
      <fieldset className="bare" disabled={!writable} title={writable ? undefined : roleReason(role, 'admin')}>
        <form
          className="grid"
          onSubmit={(event) => {
            event.preventDefault();
            add.mutate();
          }}
        >
          <label>
            Name <input required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
          </label>
          <label className="wide">
            Public key (PEM, or base64 of the 32 raw bytes)
            <textarea required rows={3} value={publicKey} onChange={(event) => setPublicKey(event.target.value)} />
          </label>
          <div className="wide">
            <BusyButton type="submit" busy={add.isPending}>
              Add key
            </BusyButton>
          </div>
        </form>
      </fieldset>
      <ErrorNote error={add.error} />
      <ConfirmDialog
        open={removing !== null}
        title={`Delete the signing key ${removing?.name ?? ''}?`}
        confirmLabel="Delete key"
        danger
        onClose={() => setRemoving(null)}
        onConfirm={async () => {
          await answer(api.DELETE('/api/v1/projects/{id}/signing-keys/{key_id}/', { params: { path: { id: projectId, key_id: removing!.id } } }));
          await refresh();
        }}
      >
        <p>Uploads signed with it are refused from now on. Builds already uploaded keep their signature.</p>
      </ConfirmDialog>
    </section>
  );
}
