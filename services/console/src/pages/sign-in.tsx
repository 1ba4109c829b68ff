import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { answer, api } from '../api';
import { BusyButton, ErrorNote } from '../components/feedback';
import { signIn, takeSignedOutNote } from '../session';
import { queryKeys } from '../query-keys';

export function SignInPage() {
  const queryClient = useQueryClient();
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [note] = useState(takeSignedOutNote);
  const methods = useQuery({ queryKey: ['sign-in-methods'], queryFn: () => answer(api.GET('/api/v1/session/methods/')) });
  return (
    <main className="page narrow" id="main">
      <h1>Sign in to the OTA console</h1>
      {note && (
        <p className="stale" role="status" data-testid="signed-out-note">
          {note}
        </p>
      )}
      {methods.data?.single_sign_on && (
        <p>
          {/* A plain link: the browser goes to the identity provider and comes back signed in. */}
          <a className="button primary" href="/api/v1/session/sso/" data-testid="single-sign-on">
            Sign in with your organisation’s account
          </a>
        </p>
      )}
      <p>
        {methods.data?.single_sign_on ? 'Or paste' : 'Paste'} a personal token (it begins with <code>ota_pat_</code>). The console exchanges it for a session cookie that no
        script can read, and forgets the token itself.
      </p>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(null);
          try {
            const session = await signIn(token.trim());
            setToken('');
            queryClient.setQueryData(queryKeys.session(), session);
          } catch (failure) {
            setError(failure);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label htmlFor="token">Personal token</label>
        <input id="token" type="password" autoComplete="off" required value={token} onChange={(event) => setToken(event.target.value)} autoFocus />
        <ErrorNote error={error} />
        <BusyButton type="submit" className="primary" busy={busy} busyText="Signing in…">
          Sign in
        </BusyButton>
      </form>
      <p className="muted">
        No token yet? An operator creates your user with <code>npm run --silent admin -- create-user --email you@example.com</code>.
      </p>
    </main>
  );
}
