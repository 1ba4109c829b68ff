import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router-dom';
import { del, get, post } from '../api';
import { BusyButton, ErrorNote, LoadState, ShownOnce } from '../components/feedback';
import { RelativeTime } from '../components/time';
import { projectPath } from '../queries';
import type { SigningKey, Token, TokenCreated } from '../types';
import { InlineForm } from '../components/inline-form';
import { PlainTable } from '../components/plain-table';

/** A list of tokens with create (raw token shown once) and revoke; `scopes` offers a scope choice. */
function TokenList({ path, queryKey, scopes }: { path: string; queryKey: string[]; scopes?: Array<'api' | 'device'> }) {
  const queryClient = useQueryClient();
  const tokens = useQuery({ queryKey, queryFn: () => get<Token[]>(path) });
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'api' | 'device'>(scopes?.[0] ?? 'api');
  const [raw, setRaw] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey });
  const create = useMutation({
    mutationFn: () => post<TokenCreated>(path, scopes ? { name, scope } : { name }),
    onSuccess: (token) => {
      setRaw(token.token);
      setName('');
      return refresh();
    },
  });
  const revoke = useMutation({ mutationFn: (id: string) => del(`${path}${id}/`), onSuccess: refresh });
  return (
    <>
      <LoadState loading={tokens.isLoading} error={tokens.error} empty={tokens.data?.length === 0 && 'No tokens.'}>
        <PlainTable caption="Tokens" headers={['Name', 'Prefix', 'Scope', 'Created', 'Last used', 'State']}>
          {tokens.data?.map((token) => (
            <tr key={token.id}>
              <td>{token.name}</td>
              <td>
                <code>{token.prefix}</code>
              </td>
              <td>{token.scope}</td>
              <td>
                <RelativeTime at={token.created_at} />
              </td>
              <td>
                <RelativeTime at={token.last_used_at} />
              </td>
              <td>
                {token.revoked_at ? (
                  <span className="muted">
                    revoked <RelativeTime at={token.revoked_at} />
                  </span>
                ) : (
                  <button type="button" className="small danger" aria-label={`Revoke ${token.name}`} disabled={revoke.isPending} onClick={() => revoke.mutate(token.id)}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </PlainTable>
      </LoadState>
      <ErrorNote error={revoke.error} />
      {raw && <ShownOnce label="The new token." secret={raw} onDismiss={() => setRaw('')} />}
      <InlineForm onSubmit={() => create.mutate()}>
        <label htmlFor={`${queryKey.join('-')}-name`}>New token</label>
        <input id={`${queryKey.join('-')}-name`} required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} placeholder="ci, fleet, …" />
        {scopes && (
          <select aria-label="Scope" value={scope} onChange={(event) => setScope(event.target.value as 'api' | 'device')}>
            <option value="api">api: the developer API (CI)</option>
            <option value="device">device: the device API only (a fleet)</option>
          </select>
        )}
        <BusyButton type="submit" busy={create.isPending}>
          Create token
        </BusyButton>
      </InlineForm>
      <ErrorNote error={create.error} />
    </>
  );
}

export function PersonalTokensPage() {
  return (
    <>
      <h1>Personal tokens</h1>
      <p className="muted">A personal token acts for you on every project of yours. Revoking the one this console signed in with ends its session.</p>
      <TokenList path="/me/tokens/" queryKey={['personal-tokens']} />
    </>
  );
}

export function ProjectTokensPage() {
  const { projectId = '' } = useParams();
  return (
    <>
      <h1>Project tokens</h1>
      <p className="muted">
        <strong>api</strong> tokens call the developer API of this project (CI); <strong>device</strong> tokens only call the device API, and are the ones to flash
        onto a fleet.
      </p>
      <TokenList path={`${projectPath(projectId)}/tokens/`} queryKey={['project-tokens', projectId]} scopes={['api', 'device']} />
      <SigningKeys projectId={projectId} />
    </>
  );
}

function SigningKeys({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient();
  const path = `${projectPath(projectId)}/signing-keys/`;
  const keys = useQuery({ queryKey: ['signing-keys', projectId], queryFn: () => get<SigningKey[]>(path) });
  const [name, setName] = useState('');
  const [publicKey, setPublicKey] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['signing-keys', projectId] });
  const add = useMutation({
    mutationFn: () => post<SigningKey>(path, { name, public_key: publicKey.trim() }),
    onSuccess: () => {
      setName('');
      setPublicKey('');
      return refresh();
    },
  });
  const remove = useMutation({ mutationFn: (id: string) => del(`${path}${id}/`), onSuccess: refresh });
  return (
    <section aria-labelledby="keys">
      <h2 id="keys">Signing keys</h2>
      <p className="muted">An upload whose manifest carries a signature is accepted only if it verifies against one of these Ed25519 keys.</p>
      <LoadState loading={keys.isLoading} error={keys.error} empty={keys.data?.length === 0 && 'No signing keys.'}>
        <ul className="plain">
          {keys.data?.map((key) => (
            <li key={key.id}>
              <strong>{key.name}</strong> <span className="hash">{key.fingerprint.slice(0, 24)}…</span> <RelativeTime at={key.created_at} />{' '}
              <button type="button" className="small danger" aria-label={`Delete key ${key.name}`} onClick={() => remove.mutate(key.id)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      </LoadState>
      <ErrorNote error={remove.error} />
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
      <ErrorNote error={add.error} />
    </section>
  );
}
