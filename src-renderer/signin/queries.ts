// Signing in to a Source, and reading again what it refused once the sign-in is kept.
import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { getBridge } from '../bridge/index.ts';
import { signInNeeded } from '../bridge/errors.ts';

/**
 * Every query that failed because `origin` asked for a sign-in is read again: those on screen at once, the others
 * when next shown. No Retry needed.
 */
export function readRefusedAgain(client: QueryClient, origin: string): Promise<void> {
  return client.invalidateQueries({ predicate: (q) => q.state.status === 'error' && signInNeeded(q.state.error)?.origin === origin });
}

export const signInKeys = { list: ['sources.signIns'] as const };

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (args: { url: string } & ({ user: string; password: string } | { token: string })) => getBridge().invoke('sources.signIn', args),
    onSuccess: (result) => {
      void client.invalidateQueries({ queryKey: signInKeys.list });
      void readRefusedAgain(client, result.signIn.origin);
    },
  });
}

/** The origins signed in to, read afresh when shown. */
export function useSignIns() {
  return useQuery({ queryKey: signInKeys.list, queryFn: () => getBridge().invoke('sources.signIns', {}), staleTime: 0 });
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (origin: string) => getBridge().invoke('sources.signOut', { url: origin }),
    onSuccess: () => void client.invalidateQueries({ queryKey: signInKeys.list }),
  });
}
