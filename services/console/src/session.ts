import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { ApiError, answer, api, setCsrfToken, whenSignedOut } from './api';
import type { Session } from './types';
import { queryKeys } from './query-keys';

/** The signed-in session, or null when there is none (the API answered 401). */
export function useSession() {
  const queryClient = useQueryClient();
  useEffect(() => whenSignedOut(() => queryClient.setQueryData(queryKeys.session(), null)), [queryClient]);
  return useQuery({
    queryKey: queryKeys.session(),
    queryFn: async () => {
      try {
        const session = await answer(api.GET('/api/v1/session/'));
        setCsrfToken(session.csrf_token);
        return session;
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null;
        throw error;
      }
    },
    staleTime: Infinity,
  });
}

export async function signIn(token: string): Promise<Session> {
  const session = await answer(api.POST('/api/v1/session/', { body: { token } }));
  setCsrfToken(session.csrf_token);
  return session;
}

/**
 * Ends the console session; a single sign-on session answers where the identity provider ends
 * the person's session there too, which the caller sends the browser to.
 */
export async function signOut(): Promise<string | null> {
  const answered = await answer(api.DELETE('/api/v1/session/')).catch(() => undefined);
  setCsrfToken('');
  return (answered as { provider_logout_url?: string } | undefined)?.provider_logout_url ?? null;
}

const SIGNED_OUT_NOTE = 'ota-console-signed-out-because';

/** Why the session is about to end, for the sign-in page to say (this tab only; no secret in it). */
export function noteSignedOutBecause(text: string): void {
  sessionStorage.setItem(SIGNED_OUT_NOTE, text);
}

/** The note left by noteSignedOutBecause, read once. */
export function takeSignedOutNote(): string {
  const text = sessionStorage.getItem(SIGNED_OUT_NOTE) ?? '';
  sessionStorage.removeItem(SIGNED_OUT_NOTE);
  return text;
}
